"""The bytes of one blob file: keys, the header, zstd whole or as a delta, decoding with checks.

A blob file is `SKB\\x01`, then `W` and a zstd frame of the content, or `D`, the 32-byte sha256
of its base and a zstd frame compressed with the base's content as a raw dictionary, or `R` and
the content itself (a tool hook's capture, `blob_stash`: written without loading zstd, compressed
by the next `put` of the same content, which the journal's fold makes). A base is always a whole
or raw blob (one link, never a chain). Why deltas (measured, `bench_blobs.py` case b):
100 versions of a 100 KB source file, a few lines edited each time, take 0.21x the raw bytes as
whole zstd blobs and 0.0067x as deltas (31.7x less); reading a delta costs a second decompression.
`decode` never returns unchecked bytes: a bad frame or an implausible size is `BlobCorrupt`.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, TypeGuard

from ..errors import BlobCorrupt, InvalidId

MAGIC = b"SKB\x01"
WHOLE, DELTA, RAW = b"W", b"D", b"R"
HEADER_BYTES = len(MAGIC) + 1 + 32
LEVEL = 3
DELTA_LEVEL = 9
"""Deltas are compressed harder: at level 3 a raw dictionary misses matches in repetitive text
(a one-line edit of a 70 KB file: 609 B at level 3, 74 B at level 9, both about 0.5 ms)."""
DELTA_MAX_BYTES = 4 << 20
"""No delta for content or a base above 4 MiB: beyond that the dictionary stops finding matches
(measured at level 9, three small edits: 241 B for 2 MB, 423 B for 4 MB, 1 MB for 8 MB)."""
DELTA_FRACTION = 8
"""A delta is kept only while it is at most 1/8 of its base's stored size; else a new whole blob."""
MAX_CONTENT_BYTES = 1 << 31

_KEY = re.compile(r"[0-9a-f]{64}")


def zstd() -> Any:
    """The zstandard module, imported on first use (start-up never pays for it)."""
    import zstandard

    return zstandard


def is_key(key: object) -> TypeGuard[str]:
    """True for a sha256 hex digest (64 lowercase hex digits)."""
    return isinstance(key, str) and bool(_KEY.fullmatch(key))


def check_key(key: str) -> str:
    """Return `key` if it is a sha256 hex digest, else raise InvalidId."""
    if not is_key(key):
        raise InvalidId(f"not a blob key (sha256 hex): {key!r}")
    return key


def content_key(data: bytes) -> str:
    """Return the key a content is stored under: its sha256 hex digest."""
    return hashlib.sha256(data).hexdigest()


def encode(data: bytes, base: tuple[str, bytes, int] | None = None) -> bytes:
    """A blob file's bytes: a delta against `base` (key, content, stored size) if it pays, else whole."""
    z = zstd()
    if base is not None and len(data) <= DELTA_MAX_BYTES and len(base[1]) <= DELTA_MAX_BYTES:
        key, content, stored = base
        raw = z.ZstdCompressionDict(content, dict_type=z.DICT_TYPE_RAWCONTENT)
        delta = z.ZstdCompressor(level=DELTA_LEVEL, dict_data=raw).compress(data)
        if len(delta) * DELTA_FRACTION <= stored:
            return MAGIC + DELTA + bytes.fromhex(key) + delta
    return MAGIC + WHOLE + z.ZstdCompressor(level=LEVEL).compress(data)


def base_in(head: bytes) -> str | None:
    """The base key a blob file's first HEADER_BYTES name, None for a whole blob."""
    return head[5:HEADER_BYTES].hex() if head[4:5] == DELTA and len(head) >= HEADER_BYTES else None


def parse(key: str, raw: bytes) -> tuple[bytes, str | None, bytes]:
    """Split a blob file into (kind, base key or None, zstd frame); BlobCorrupt if malformed."""
    if raw[:4] != MAGIC or raw[4:5] not in (WHOLE, DELTA, RAW):
        raise BlobCorrupt(key, "not a blob file (bad header)")
    if raw[4:5] in (WHOLE, RAW):
        return raw[4:5], None, raw[5:]
    if len(raw) < HEADER_BYTES:
        raise BlobCorrupt(key, "truncated delta header")
    return DELTA, raw[5:HEADER_BYTES].hex(), raw[HEADER_BYTES:]


def decode(key: str, frame: bytes, dictionary: bytes | None) -> bytes:
    """Decompress one zstd frame (against a raw dictionary for deltas); BlobCorrupt on any failure."""
    z = zstd()
    try:
        size = z.frame_content_size(frame)
        if size < 0 or size > MAX_CONTENT_BYTES:
            raise BlobCorrupt(key, f"implausible content size {size}")
        raw = (z.ZstdCompressionDict(dictionary, dict_type=z.DICT_TYPE_RAWCONTENT)
               if dictionary is not None else None)
        return bytes(z.ZstdDecompressor(dict_data=raw).decompress(frame))
    except z.ZstdError as exc:
        raise BlobCorrupt(key, f"does not decompress: {exc}") from None
