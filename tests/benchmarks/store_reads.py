"""The store's read cases of `bench_store.py`: c) a full read without snapshot, d) read_latest
with snapshots, e) the first page of a listing and f) a rebuild of the index, each beside its
raw baseline."""

from __future__ import annotations

import gc
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rollouts import BODY_POOL, make_store, message_bodies, write_rollout  # noqa: E402
from store_figures import alternate, peak_memory, perf, timed  # noqa: E402

from sessionkeeper.store.index import ListQuery  # noqa: E402
from sessionkeeper.store.reader import read_latest, read_rollout  # noqa: E402
from sessionkeeper.store.store import Store  # noqa: E402

# ---------------------------------------------------------------------------------------------
# c) full read without snapshot; d) read_latest with snapshots
# ---------------------------------------------------------------------------------------------

def raw_parse(path: Path, *, gc_off: bool) -> list[Any]:
    """Read the file, split lines, orjson.loads each, keep every record."""
    was = gc.isenabled()
    if gc_off:
        gc.disable()
    try:
        with open(path, "rb") as f:
            data = f.read()
        loads = orjson.loads
        return [loads(line) for line in data.split(b"\n") if line]
    finally:
        if was:
            gc.enable()


def bench_read_full(work: Path, n: int, reps: int) -> dict[str, Any]:
    path = work / "full.jsonl"
    size = write_rollout(path, message_bodies(n, seed=3))
    check = read_rollout(path)
    assert len(check.records) == n and not check.damage and check.tail is None
    del check

    times = alternate(reps, {
        "raw": lambda: timed(lambda: raw_parse(path, gc_off=True)),
        "reader": lambda: timed(lambda: read_rollout(path)),
    })
    raw_gc_on = [timed(lambda: raw_parse(path, gc_off=False)) for _ in range(max(1, reps // 2))]
    mem = {"raw": peak_memory(lambda: raw_parse(path, gc_off=True)),
           "reader": peak_memory(lambda: read_rollout(path))}
    path.unlink()
    return {"n_events": n, "file_bytes": size, "raw_s": times["raw"],
            "reader_s": times["reader"], "raw_gc_on_s": raw_gc_on, "peak_bytes": mem}


def bench_read_latest(work: Path, small: int, large: int, reps: int) -> dict[str, Any]:
    pool = BODY_POOL
    out: dict[str, Any] = {"small_events": small, "large_events": large, "snapshot_every": 1000,
                           "tail_events": 500}
    paths = {}
    for name, n in (("small", small), ("large", large)):
        path = work / f"latest-{name}.jsonl"
        t0 = perf()
        # bodies cycle through a pool; only the count and the bytes matter here
        bodies = [pool[i % len(pool)] for i in range(n)]
        out[f"{name}_file_bytes"] = write_rollout(path, bodies, snapshot_every=1000, tail=500)
        out[f"{name}_generate_s"] = perf() - t0
        del bodies
        got = read_latest(path)
        assert got.from_snapshot and len(got.records) == 501 and not got.damage, (
            len(got.records), got.damage)
        paths[name] = path
    times = alternate(reps, {name: (lambda p=p: timed(lambda: read_latest(p, verify=False)))
                             for name, p in paths.items()})
    out["small_s"], out["large_s"] = times["small"], times["large"]
    verified = alternate(reps, {name: (lambda p=p: timed(lambda: read_latest(p)))
                                for name, p in paths.items()})
    out["small_verified_s"], out["large_verified_s"] = verified["small"], verified["large"]
    out["peak_bytes"] = {name: peak_memory(lambda p=p: read_latest(p)) for name, p in paths.items()}
    for p in paths.values():
        p.unlink()
    return out


# ---------------------------------------------------------------------------------------------
# e) listing, f) rebuild
# ---------------------------------------------------------------------------------------------

def raw_dir_scan(root: Path, limit: int | None = 50) -> list[dict[str, Any]]:
    """scandir the tree, open each rollout, parse its first line, sort newest first."""
    metas = []
    stack = [str(root / "sessions")]
    loads = orjson.loads
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.endswith(".jsonl"):
                    with open(entry.path, "rb") as f:
                        metas.append(loads(f.readline()))
    metas.sort(key=lambda m: m["ts"], reverse=True)
    return metas[:limit] if limit else metas


def raw_rebuild(root: Path, db_path: Path) -> None:
    """The raw directory scan + one-table SQLite insert into a temp file renamed into place
    (the peer's 'rebuild SQLite index from dir'), for scale: what an index write costs at least."""
    metas = raw_dir_scan(root, limit=None)
    tmp = db_path.with_name(db_path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("CREATE TABLE threads(thread_id TEXT PRIMARY KEY, session_id TEXT, cwd TEXT, "
               "title TEXT, ts TEXT)")
    db.execute("CREATE INDEX threads_recent ON threads(ts DESC)")
    db.execute("CREATE INDEX threads_cwd ON threads(cwd, ts DESC)")
    db.executemany("INSERT INTO threads VALUES(?,?,?,?,?)",
                   [(m["thread_id"], m["session_id"], m["cwd"], m.get("title"), m["ts"])
                    for m in metas])
    db.commit()
    db.close()
    fd = os.open(tmp, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    os.replace(tmp, db_path)


def bench_listing(work: Path, n: int, reps: int) -> dict[str, Any]:
    root = work / "store"
    t0 = perf()
    make_store(root, n)
    gen = perf() - t0
    store = Store(root)
    counts = store.rebuild()
    assert counts["sessions"] == n and counts["unindexable"] == 0, counts
    page = store.list_threads(ListQuery(limit=50))
    assert len(page) == 50 and len(raw_dir_scan(root)) == 50

    def listed() -> float:
        t = perf()
        store.list_threads(ListQuery(limit=50))
        return perf() - t

    def fresh() -> float:
        t = perf()
        s = Store(root)
        s.list_threads(ListQuery(limit=50))
        dt = perf() - t
        s.index().close()
        return dt

    scan_reps = reps
    inner = 20  # the index query is sub-millisecond: time 20 calls per repetition, report per call
    times = alternate(scan_reps, {
        "scan": lambda: timed(lambda: raw_dir_scan(root)),
        "index": lambda: sum(listed() for _ in range(inner)) / inner,
        "open_index": lambda: sum(fresh() for _ in range(inner)) / inner,
    })
    rebuild = alternate(reps, {
        "scan": lambda: timed(lambda: raw_dir_scan(root, limit=None)),
        "rebuild": lambda: timed(store.rebuild),
        "raw_rebuild": lambda: timed(lambda: raw_rebuild(root, work / "raw-index.db")),
    })
    store.index().close()
    return {"n_threads": n, "generate_s": gen, "scan_s": times["scan"],
            "index_s": times["index"], "open_index_s": times["open_index"],
            "rebuild_scan_s": rebuild["scan"], "rebuild_s": rebuild["rebuild"],
            "raw_rebuild_s": rebuild["raw_rebuild"]}
