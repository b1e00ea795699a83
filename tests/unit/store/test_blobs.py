"""The blob store: content-addressed, deduplicated, private, atomic, verified, collected (`store_dir`)."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sessionkeeper.errors import BlobCorrupt, BlobMissing, InvalidId
from sessionkeeper.store import blobs as blobs_module
from sessionkeeper.store.blobs import BlobStore, content_key

SOURCE = b"".join(b"def f%d(x):\n    return x * %d  # line\n" % (i, i) for i in range(3000))


def _age(store: BlobStore, key: str, seconds: float) -> None:
    """Make a blob look `seconds` old (real mtime on disk)."""
    when = time.time() - seconds
    os.utime(store.root / key[:2] / key[2:], (when, when))


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != ".lock")


def test_put_returns_the_sha256_of_the_content_and_get_returns_it(store_dir: Path) -> None:
    """Fixture: `store_dir`, one 100 KB source text."""
    store = BlobStore(store_dir)
    key = store.put(SOURCE)
    assert key == hashlib.sha256(SOURCE).hexdigest()
    assert store.get(key) == SOURCE
    path = store_dir / "blobs" / key[:2] / key[2:]
    assert path.is_file() and path.stat().st_size < len(SOURCE) // 3  # compressed


def test_putting_the_same_content_twice_stores_one_file(store_dir: Path) -> None:
    """Fixture: `store_dir`, the same bytes put twice and an empty content."""
    store = BlobStore(store_dir)
    assert store.put(SOURCE) == store.put(bytes(SOURCE))
    empty = store.put(b"")
    assert store.get(empty) == b"" and empty == content_key(b"")
    assert len(_files(store.root)) == 2


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_blob_files_are_0600_and_directories_0700_under_any_umask(tmp_path: Path, umask: int) -> None:
    """Fixture: a store created under umask 000 / 022 / 077."""
    old = os.umask(umask)
    try:
        store = BlobStore(tmp_path / "store")
        key = store.put(SOURCE)
    finally:
        os.umask(old)
    blob = store.root / key[:2] / key[2:]
    assert stat.S_IMODE(blob.stat().st_mode) == 0o600
    for directory in (tmp_path / "store", store.root, blob.parent):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def test_put_fsyncs_the_file_then_renames_then_fsyncs_the_directory(
        store_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: `store_dir`; os.fsync / os.replace / fsync_dir are spied on (still called for real).

    A power loss cannot be caused here, so the order of the real calls is what is checked.
    """
    calls: list[str] = []
    real_fsync, real_replace, real_dir = os.fsync, os.replace, blobs_module.fsync_dir
    def fsync(fd: int) -> None:
        if stat.S_ISREG(os.fstat(fd).st_mode):  # fsync_dir's own fsync is recorded by its spy
            calls.append("fsync file")
        real_fsync(fd)

    def replace(src: str, dst: str) -> None:
        calls.append("rename")
        real_replace(src, dst)

    def fsync_dir(path: Path) -> None:
        calls.append(f"fsync dir {Path(path).name}")
        real_dir(path)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(blobs_module, "fsync_dir", fsync_dir)
    store = BlobStore(store_dir)
    key = store.put(SOURCE)
    assert calls == ["fsync dir store", "fsync file", "rename", f"fsync dir {key[:2]}", "fsync dir blobs"]
    calls.clear()
    store.put(SOURCE + b"x")
    assert calls[:2] == ["fsync file", "rename"] and calls[2].startswith("fsync dir")
    assert not [p for p in _files(store.root) if p.name.endswith(blobs_module.TEMP_SUFFIX)]


def test_a_kill_during_puts_leaves_only_whole_blobs(store_dir: Path) -> None:
    """Fixture: a child process putting 1 MB contents in a loop, killed with SIGKILL."""
    code = ("import os, sys\nfrom sessionkeeper.store.blobs import BlobStore\n"
            "s = BlobStore(sys.argv[1]); n = 0\n"
            "while True:\n    n += 1\n    s.put(os.urandom(1 << 20) + b'%d' % n)\n"
            "    os.write(1, b'.')\n")
    child = subprocess.Popen([sys.executable, "-c", code, str(store_dir)], stdout=subprocess.PIPE)
    assert child.stdout is not None
    child.stdout.read(5)  # five puts done
    time.sleep(0.05)
    child.kill()
    child.wait()
    store = BlobStore(store_dir)
    blobs, _temps = store.scan()
    assert len(blobs) >= 5
    assert store.verify().ok  # no partial blob under a final name, whatever the kill hit
    report = store.gc([b.key for b in blobs], min_age_s=0)
    assert report.removed == () and not [p for p in _files(store.root) if p.name.startswith(".")]


def test_get_raises_blob_missing_for_an_absent_key(store_dir: Path) -> None:
    """Fixture: `store_dir`, empty."""
    with pytest.raises(BlobMissing) as info:
        BlobStore(store_dir).get("ab" * 32)
    assert info.value.key == "ab" * 32
    assert info.value.to_dict()["blob"] == "ab" * 32
    assert (info.value.exit_code, info.value.rpc_code) == (74, -32016)


def test_a_key_that_is_not_a_sha256_is_refused_before_any_path_is_built(store_dir: Path) -> None:
    """Fixture: `store_dir`; keys climbing out, upper case, short."""
    store = BlobStore(store_dir)
    for bad in ("../" + "a" * 61, "A" * 64, "abc", "a" * 63 + "/"):
        with pytest.raises(InvalidId):
            store.get(bad)
    assert bad not in store


@pytest.mark.parametrize("damage", ["flip", "truncate", "header", "empty"])
def test_get_raises_blob_corrupt_for_damaged_bytes(store_dir: Path, damage: str) -> None:
    """Fixture: one stored blob, then a byte flipped / the file cut / its header broken / emptied."""
    store = BlobStore(store_dir)
    key = store.put(SOURCE)
    path = store.root / key[:2] / key[2:]
    raw = bytearray(path.read_bytes())
    if damage == "flip":
        raw[len(raw) // 2] ^= 0x40
    elif damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "header":
        raw[0:4] = b"XXXX"
    else:
        raw = bytearray()
    path.write_bytes(bytes(raw))
    with pytest.raises(BlobCorrupt) as info:
        store.get(key)
    assert (info.value.exit_code, info.value.rpc_code, info.value.name) == (74, -32017, "blob_corrupt")
    assert [d.kind for d in store.verify().damage] == ["corrupt"]


def test_a_blob_replaced_by_a_symlink_is_never_followed(store_dir: Path, tmp_path: Path) -> None:
    """Fixture: a stored blob whose file is swapped for a symlink to a copy of itself."""
    store = BlobStore(store_dir)
    key = store.put(SOURCE)
    path = store.root / key[:2] / key[2:]
    copy = tmp_path / "elsewhere"
    copy.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(copy)
    with pytest.raises(BlobCorrupt, match="symlink"):
        store.get(key)
    assert key not in store


def test_a_delta_against_the_previous_version_reads_back_and_is_far_smaller(store_dir: Path) -> None:
    """Fixture: a 100 KB source and a copy with two lines edited, put with the first as base."""
    store = BlobStore(store_dir)
    first = store.put(SOURCE)
    edited = SOURCE.replace(b"return x * 7 ", b"return x + 7 ").replace(b"def f99(", b"def g99(")
    second = store.put(edited, base=first)
    info = store.info(second)
    assert info is not None and info.base == first
    assert store.get(second) == edited
    whole = store.info(first)
    assert whole is not None and info.stored_bytes * 20 < whole.stored_bytes


def test_a_delta_is_always_against_a_whole_blob(store_dir: Path) -> None:
    """Fixture: three versions, each put with the previous one as base."""
    store = BlobStore(store_dir)
    v1 = store.put(SOURCE)
    v2 = store.put(SOURCE + b"# two\n", base=v1)
    v3 = store.put(SOURCE + b"# two\n# three\n", base=v2)
    assert store.info(v2).base == v1 and store.info(v3).base == v1  # type: ignore[union-attr]
    assert store.get(v3).endswith(b"# three\n")


def test_content_unlike_its_base_is_stored_whole(store_dir: Path) -> None:
    """Fixture: a base and an unrelated random content put against it."""
    store = BlobStore(store_dir)
    base = store.put(SOURCE)
    other = store.put(os.urandom(50_000), base=base)
    assert store.info(other).base is None  # type: ignore[union-attr]


def test_a_delta_whose_base_is_gone_or_corrupt_cannot_be_read(store_dir: Path) -> None:
    """Fixture: a delta blob, then its base deleted (missing) or damaged (corrupt)."""
    store = BlobStore(store_dir)
    base = store.put(SOURCE)
    delta = store.put(SOURCE + b"# more\n", base=base)
    base_path = store.root / base[:2] / base[2:]
    saved = base_path.read_bytes()
    base_path.unlink()
    with pytest.raises(BlobMissing, match="its base"):
        store.get(delta)
    base_path.write_bytes(saved[:-9] + b"123456789")
    with pytest.raises(BlobCorrupt, match="its base"):
        store.get(delta)


def test_put_rewrites_a_corrupt_blob_whole(store_dir: Path) -> None:
    """Fixture: a stored blob damaged on disk, then the same content put again."""
    store = BlobStore(store_dir)
    key = store.put(SOURCE)
    path = store.root / key[:2] / key[2:]
    path.write_bytes(b"garbage")
    assert store.put(SOURCE) == key
    assert store.get(key) == SOURCE


def test_verify_reports_each_missing_and_corrupt_blob(store_dir: Path) -> None:
    """Fixture: three blobs, one damaged, plus a referenced key never stored."""
    store = BlobStore(store_dir)
    good, bad = store.put(b"good\n"), store.put(SOURCE)
    (store.root / bad[:2] / bad[2:]).write_bytes(b"SKB\x01W not zstd")
    never = content_key(b"never stored")
    check = store.verify([good, bad, never])
    assert check.checked == 2 and not check.ok
    assert check.corrupt == (bad,) and check.missing == (never,)
    assert store.unreadable([good, bad, never]).keys() == {bad, never}


def test_gc_removes_unreferenced_blobs_and_keeps_referenced_ones_with_their_bases(store_dir: Path) -> None:
    """Fixture: a whole blob (unreferenced) under a referenced delta, and an unreferenced blob."""
    store = BlobStore(store_dir)
    base = store.put(SOURCE)
    delta = store.put(SOURCE + b"# edit\n", base=base)
    loose = store.put(b"nobody names me\n")
    report = store.gc([delta], min_age_s=0)
    assert report.removed == (loose,) and report.expired == ()
    assert store.get(delta).endswith(b"# edit\n") and base in store and loose not in store


def test_gc_keeps_blobs_younger_than_the_grace_period(store_dir: Path) -> None:
    """Fixture: two unreferenced blobs, one aged two hours, one just written."""
    store = BlobStore(store_dir)
    old, new = store.put(b"old\n"), store.put(b"new\n")
    _age(store, old, 7200)
    assert store.gc([], min_age_s=3600).removed == (old,)
    assert new in store


def test_gc_over_the_cap_evicts_the_least_recently_used_but_never_a_protected_blob(store_dir: Path) -> None:
    """Fixture: three referenced blobs of ~30 KB, aged 3/2/1 hours; the oldest is protected."""
    store = BlobStore(store_dir)
    keys = [store.put(os.urandom(30_000)) for _ in range(3)]
    for key, hours in zip(keys, (3, 2, 1), strict=True):
        _age(store, key, hours * 3600)
    report = store.gc(keys, cap_bytes=65_000, protect=[keys[0]], min_age_s=60)
    assert report.expired == (keys[1],)  # the oldest unprotected one is enough
    assert keys[0] in store and keys[2] in store and not report.over_cap
    report = store.gc(keys, cap_bytes=1, protect=[keys[0]], min_age_s=60)
    assert report.expired == (keys[2],) and report.over_cap and keys[0] in store
    assert report.stored_bytes == store.info(keys[0]).stored_bytes  # type: ignore[union-attr]


def test_gc_evicting_a_whole_blob_evicts_the_deltas_built_on_it(store_dir: Path) -> None:
    """Fixture: a whole blob with one delta (both referenced, old) and a newer unrelated blob."""
    store = BlobStore(store_dir)
    base = store.put(SOURCE)
    delta = store.put(SOURCE + b"# d\n", base=base)
    other = store.put(os.urandom(30_000))
    for key, hours in ((base, 5), (delta, 4), (other, 1)):
        _age(store, key, hours * 3600)
    report = store.gc([base, delta, other], cap_bytes=35_000, min_age_s=60)
    assert set(report.expired) == {base, delta} and other in store
    assert store.verify().ok


def test_gc_never_evicts_the_base_of_a_protected_delta(store_dir: Path) -> None:
    """Fixture: an old whole blob and a protected delta on it, cap 0."""
    store = BlobStore(store_dir)
    base = store.put(SOURCE)
    delta = store.put(SOURCE + b"# d\n", base=base)
    _age(store, base, 9000)
    _age(store, delta, 9000)
    report = store.gc([], cap_bytes=0, protect=[delta], min_age_s=60)
    assert report.removed == () and report.expired == () and report.over_cap
    assert store.get(delta).endswith(b"# d\n")


def test_gc_removes_temp_files_a_crashed_put_left_behind(store_dir: Path) -> None:
    """Fixture: a blob and a stale temp file beside it (two hours old) and a fresh one."""
    store = BlobStore(store_dir)
    key = store.put(b"x\n")
    stale = store.root / key[:2] / f".abc{blobs_module.TEMP_SUFFIX}"
    fresh = store.root / key[:2] / f".def{blobs_module.TEMP_SUFFIX}"
    stale.write_bytes(b"partial")
    fresh.write_bytes(b"partial")
    when = time.time() - 7200
    os.utime(stale, (when, when))
    report = store.gc([key], min_age_s=3600)
    assert report.temps_removed == 1 and not stale.exists() and fresh.exists()


def test_deltas_are_kept_up_to_the_size_limit_and_skipped_above_it(store_dir: Path) -> None:
    """Fixture: a 2 MB and a 5 MB text, each put again with one line changed against itself."""
    store = BlobStore(store_dir)
    for size, delta in ((2 << 20, True), (5 << 20, False)):
        text = b"".join(b"row %d of the ledger, amount %d\n" % (i, i * 7) for i in range(size // 30))[:size]
        first = store.put(text)
        second = store.put(text.replace(b"row 1000 of", b"row 1000 in", 1), base=first)
        assert (store.info(second).base == first) is delta  # type: ignore[union-attr]
        assert store.get(second).count(b"row 1000 in") == 1
