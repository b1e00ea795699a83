"""A tool hook's raw blob (`store.blob_stash`) is a blob like any: read back verified, compressed
by the next put of its content, fine as a delta's base; written durably, privately, once."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sessionkeeper.store.blob_format import RAW, WHOLE
from sessionkeeper.store.blob_stash import stash
from sessionkeeper.store.blobs import BlobStore


def _kind(store: BlobStore, key: str) -> bytes:
    return (store.root / key[:2] / key[2:]).read_bytes()[4:5]


def test_a_stashed_raw_blob_reads_back_and_the_next_put_compresses_it(tmp_path: Path) -> None:
    """Fixture: `tmp_path` as a store; 100 KB of text stashed raw, read, put again."""
    data = b"line of a source file\n" * 5000
    key = hashlib.sha256(data).hexdigest()
    stash(str(tmp_path), key, data)
    blobs = BlobStore(tmp_path)
    path = blobs.root / key[:2] / key[2:]
    assert _kind(blobs, key) == RAW and path.stat().st_mode & 0o777 == 0o600
    assert (blobs.root / key[:2]).stat().st_mode & 0o777 == 0o700
    assert key in blobs and blobs.get(key) == data
    stash(str(tmp_path), key, b"never written: the blob exists")
    assert blobs.get(key) == data
    assert blobs.put(data) == key
    assert _kind(blobs, key) == WHOLE and path.stat().st_size < len(data) // 10
    assert blobs.get(key) == data
    assert not [n for n in os.listdir(path.parent) if n.endswith(".blob-tmp")]


def test_a_raw_blob_is_a_base_for_a_delta(tmp_path: Path) -> None:
    """Fixture: `tmp_path`; a raw blob, then its next version put with it as base."""
    first = b"".join(b"def f%d():\n    return %d\n" % (n, n) for n in range(2000))
    key = hashlib.sha256(first).hexdigest()
    stash(str(tmp_path), key, first)
    blobs = BlobStore(tmp_path)
    second = first.replace(b"return 7\n", b"return 8\n")
    later = blobs.put(second, base=key)
    assert blobs.get(later) == second and blobs.info(later).base == key  # type: ignore[union-attr]
    assert blobs.get(key) == first
