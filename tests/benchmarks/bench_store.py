"""Session store benchmarks, side by side with raw baselines on the same bytes, in one process.

    python tests/benchmarks/bench_store.py [--quick] [--json OUT.json] [--reps N] [--keep]

Cases (issue 2, "Tests and benchmarks"; baselines as in shared/recipes/reliability.md §2):
  a  append, `written`: Recorder.append of pre-encoded bodies, one per call, vs os.write of the same
     framed lines on an O_APPEND fd (target >= 1/3 of raw); the full API path (Session.record:
     pydantic validation, redaction, state folding, snapshots) is reported beside it, no target.
  b  durable append, 8 threads each waiting for its ack: Recorder (group commit) vs a raw no-delay
     group-commit loop (target >= 0.9x); events per fsync for both.
  c  read a 100k-event rollout without snapshot: reader.read_rollout vs read + split + orjson.loads
     per line keeping every record (target <= 1.2x). Both run with the cyclic GC disabled during
     the load (the reader does that itself); the GC-enabled raw figure is shown for reference.
  d  reader.read_latest on rollouts with a snapshot every 1000 events: 1M vs 10k events
     (target ratio <= 2); d' the same with the CRC check of the bytes before the snapshot that a
     resume does (linear in bytes, at CRC speed; reported, no target).
  e  first page (50) of 10k threads: Store.list_threads vs a directory scan (scandir + open +
     first line + orjson + sort) (target >= 100x faster).
  f  Store.rebuild of the index vs the same raw directory scan (target <= 1.5x).
  g  peak memory (tracemalloc, in a separate untimed pass) for c and d.

Figures are medians over repetitions; subject and baseline alternate within each repetition
(the order flips every repetition). Everything runs in temp dirs under /tmp, removed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from sessionkeeper.api import Keeper  # noqa: E402
from sessionkeeper.events import SCHEMA_VERSION, Durability  # noqa: E402
from sessionkeeper.store.codec import frame  # noqa: E402
from sessionkeeper.store.index import ListQuery  # noqa: E402
from sessionkeeper.store.reader import read_latest, read_rollout  # noqa: E402
from sessionkeeper.store.recorder import Recorder  # noqa: E402
from sessionkeeper.store.sinks import FileSink  # noqa: E402
from sessionkeeper.store.store import Store  # noqa: E402

perf = time.perf_counter
APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
WORDS = ["the", "payment", "rounding", "bug", "fix", "test", "passes", "refactor", "module",
         "function", "call", "tool", "result", "assistant", "user", "review", "diff", "commit",
         "branch", "session", "keeper", "store", "index", "rollout"]


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------

def message_bodies(n: int, seed: int = 1, size: int = 500) -> list[bytes]:
    """n encoded message bodies of about `size` bytes (distinct texts, no credential shapes)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words, length = [], 0
        while length < size - 60:
            w = rng.choice(WORDS)
            words.append(w)
            length += len(w) + 1
        out.append(orjson.dumps({"type": "message", "role": ("user", "assistant")[i % 2],
                                 "text": f"{i} " + " ".join(words)}))
    return out


def now_ts() -> bytes:
    t = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"
    return stamp.encode()


def meta_body(thread: str, session: str, cwd: str) -> bytes:
    return orjson.dumps({"type": "session_meta", "schema_version": SCHEMA_VERSION,
                         "thread_id": thread, "session_id": session, "source": "startup",
                         "cwd": cwd, "permissions": {"approval_mode": "on-request"},
                         "client": {"name": "bench"}, "title": f"thread {session[:8]}"})


def write_rollout(path: Path, bodies: list[bytes], *, snapshot_every: int = 0,
                  tail: int = 0) -> int:
    """A rollout of `len(bodies)` events (+ `tail` more) framed with codec.frame; returns bytes.

    With snapshot_every, a snapshot event follows every snapshot_every-th event (seq counts it),
    carrying the size and CRC32 of the bytes before it, as the recorder writes them.
    """
    ts = now_ts()
    sid = str(uuid.uuid4())
    n_events = len(bodies)
    total, crc = 0, 0
    with open(path, "wb", buffering=1 << 20) as f:
        def put(line: bytes) -> None:
            nonlocal total, crc
            total += f.write(line)
            crc = zlib.crc32(line, crc)

        put(frame(0, ts, meta_body(str(uuid.uuid4()), sid, "/tmp/bench")))
        seq = 1
        k = len(BODY_POOL)
        for i in range(n_events + tail):
            put(frame(seq, ts, bodies[i] if i < n_events else BODY_POOL[i % k]))
            seq += 1
            if snapshot_every and i < n_events and (i + 1) % snapshot_every == 0:
                put(frame(seq, ts, snapshot_body(seq - 1, prefix=(total, crc))))
                seq += 1
    return total


def snapshot_body(through: int, *, prefix: tuple[int, int]) -> bytes:
    """A snapshot of modest size (~1.5 KB): todos, cost, model, permissions, a context summary."""
    state = {
        "subsystems": {
            "todos": {"items": [{"id": f"t{i}", "text": f"todo number {i}", "status": "pending"}
                                for i in range(8)]},
            "cost": {"input_tokens": through * 40, "output_tokens": through * 9, "usd": through / 1e3},
            "model": {"effective": "model-x", "overrides": {}},
            "permissions": {"approval_mode": "on-request", "sandbox_policy": "workspace-write"},
            "context": {"summary": {"text": "summary " * 60, "through_seq": through - 10,
                                    "seq": through - 5}, "messages": []},
        },
        "summary": {"title": "bench thread", "todos": "0/8"},
    }
    return orjson.dumps({"type": "snapshot", "through_seq": through, "state": state,
                         "prefix_bytes": prefix[0], "prefix_crc": f"{prefix[1]:08x}"})


BODY_POOL = message_bodies(64, seed=7)


# ---------------------------------------------------------------------------------------------
# timing helpers
# ---------------------------------------------------------------------------------------------

def median(xs: list[float]) -> float:
    return statistics.median(xs)


def alternate(reps: int, cases: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    """Run each case once per repetition, flipping the order every repetition; seconds per run."""
    names = list(cases)
    out: dict[str, list[float]] = {n: [] for n in names}
    for r in range(reps):
        for name in (names if r % 2 == 0 else names[::-1]):
            gc.collect()
            out[name].append(cases[name]())
    return out


def timed(fn: Callable[[], Any]) -> float:
    t0 = perf()
    fn()
    return perf() - t0


def peak_memory(fn: Callable[[], Any]) -> int:
    """Peak bytes traced by tracemalloc while `fn` runs (its result is kept until the end)."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
        del result
    finally:
        tracemalloc.stop()
    return peak


# ---------------------------------------------------------------------------------------------
# a) append, written
# ---------------------------------------------------------------------------------------------

def bench_append(work: Path, n: int, reps: int) -> dict[str, Any]:
    bodies = message_bodies(n)
    ts = now_ts()
    lines = [frame(i, ts, b) for i, b in enumerate(bodies)]
    counter = iter(range(10**9))

    def raw() -> float:
        path = work / f"raw-{next(counter)}.jsonl"
        fd = os.open(path, APPEND, 0o600)
        write = os.write
        t0 = perf()
        for line in lines:
            write(fd, line)
        dt = perf() - t0
        os.close(fd)
        path.unlink()
        return dt

    def recorder() -> float:
        path = work / f"rec-{next(counter)}.jsonl"
        rec = Recorder(FileSink(path), durability=Durability.WRITTEN)
        append = rec.append
        t0 = perf()
        for body in bodies:
            append([body])
        dt = perf() - t0
        rec.sink.close()  # no close(): that would fsync, which is not part of the case
        path.unlink()
        return dt

    times = alternate(reps, {"raw": raw, "recorder": recorder})
    # full API path: dicts through Session.record (validation, redaction, folding, snapshots)
    dicts = [orjson.loads(b) for b in bodies]
    api_times, api_bytes = [], []
    ws = work / "ws"
    ws.mkdir(exist_ok=True)
    for r in range(max(1, reps // 2)):
        keeper = Keeper(work / f"api-store-{r}", durability="written")
        session = keeper.start(str(ws))
        record = session.record
        gc.collect()
        t0 = perf()
        for d in dicts:
            record(d)
        api_times.append(perf() - t0)
        api_bytes.append(Path(session.path).stat().st_size)
        session.writer.recorder.sink.close()
        session.writer._lock.release()
        shutil.rmtree(work / f"api-store-{r}")
    line_bytes = sum(map(len, lines)) / n
    return {
        "n_events": n, "line_bytes_mean": line_bytes,
        "raw_s": times["raw"], "recorder_s": times["recorder"], "api_s": api_times,
        "raw_ev_s": n / median(times["raw"]), "recorder_ev_s": n / median(times["recorder"]),
        "api_ev_s": n / median(api_times),
        "api_rollout_bytes_per_event": median(api_bytes) / n,
    }


# ---------------------------------------------------------------------------------------------
# b) durable append, 8 concurrent waiters
# ---------------------------------------------------------------------------------------------

class CountingSink(FileSink):
    """A FileSink that counts fsyncs."""

    syncs = 0

    def sync(self) -> None:
        self.syncs += 1
        super().sync()


def run_producers(work: Callable[[list[bytes]], None], items: list[bytes],
                  n_threads: int) -> float:
    """Seconds for `n_threads` threads, released together, to run `work` on their share."""
    start = threading.Barrier(n_threads + 1)

    def producer(chunk: list[bytes]) -> None:
        start.wait()
        work(chunk)

    threads = [threading.Thread(target=producer, args=(items[i::n_threads],))
               for i in range(n_threads)]
    for t in threads:
        t.start()
    start.wait()
    t0 = perf()
    for t in threads:
        t.join()
    return perf() - t0


def raw_group_commit(path: Path, lines: list[bytes], n_threads: int) -> tuple[float, int]:
    """Threads write a line each under a lock, then wait until an fsync covers it; whoever finds
    no fsync running starts one covering everything written so far (no delay, no timer)."""
    fd = os.open(path, APPEND, 0o600)
    wlock, cond = threading.Lock(), threading.Condition()
    st = {"written": 0, "synced": 0, "syncing": False, "fsyncs": 0}

    def producer(chunk: list[bytes]) -> None:
        for line in chunk:
            with wlock:
                os.write(fd, line)
                st["written"] += len(line)
                end = st["written"]
            with cond:
                while st["synced"] < end:
                    if st["syncing"]:
                        cond.wait()
                        continue
                    st["syncing"], target = True, st["written"]
                    cond.release()
                    try:
                        os.fsync(fd)
                    finally:
                        cond.acquire()
                    st["syncing"], st["fsyncs"] = False, st["fsyncs"] + 1
                    st["synced"] = max(st["synced"], target)
                    cond.notify_all()

    dt = run_producers(producer, lines, n_threads)
    os.close(fd)
    return dt, st["fsyncs"]


def recorder_group_commit(path: Path, bodies: list[bytes], n_threads: int) -> tuple[float, int]:
    sink = CountingSink(path)
    rec = Recorder(sink, durability=Durability.DURABLE)
    sink.syncs = 0

    def producer(chunk: list[bytes]) -> None:
        for body in chunk:
            rec.append([body], Durability.DURABLE)

    dt = run_producers(producer, bodies, n_threads)
    sink.close()
    return dt, sink.syncs


def bench_durable(work: Path, n: int, reps: int, n_threads: int = 8) -> dict[str, Any]:
    bodies = message_bodies(n, seed=2)
    ts = now_ts()
    lines = [frame(i, ts, b) for i, b in enumerate(bodies)]
    fsyncs: dict[str, list[int]] = {"raw": [], "recorder": []}
    counter = iter(range(10**9))

    def case(name: str) -> Callable[[], float]:
        def run() -> float:
            path = work / f"{name}-{next(counter)}.jsonl"
            if name == "raw":
                dt, syncs = raw_group_commit(path, lines, n_threads)
            else:
                dt, syncs = recorder_group_commit(path, bodies, n_threads)
            fsyncs[name].append(syncs)
            path.unlink()
            return dt
        return run

    times = alternate(reps, {"raw": case("raw"), "recorder": case("recorder")})
    return {
        "n_events": n, "threads": n_threads, "raw_s": times["raw"], "recorder_s": times["recorder"],
        "raw_ev_s": n / median(times["raw"]), "recorder_ev_s": n / median(times["recorder"]),
        "raw_ev_per_fsync": n / median(fsyncs["raw"]),
        "recorder_ev_per_fsync": n / median(fsyncs["recorder"]),
    }


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

def make_store(root: Path, n: int) -> None:
    """n one-session threads written straight into the store layout (meta + 3 events each)."""
    sessions = root / "sessions"
    rng = random.Random(5)
    base = time.time() - 40 * 86400
    made: set[Path] = set()
    for i in range(n):
        t = base + rng.uniform(0, 40 * 86400)
        day = sessions / time.strftime("%Y/%m/%d", time.gmtime(t))
        if day not in made:
            day.mkdir(parents=True, exist_ok=True, mode=0o700)
            made.add(day)
        ts = (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
              + f".{int(t * 1000) % 1000:03d}Z").encode()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(t)) + f"{int(t * 1000) % 1000:03d}Z"
        sid, tid = str(uuid.UUID(int=rng.getrandbits(128), version=4)), str(
            uuid.UUID(int=rng.getrandbits(128), version=4))
        data = frame(0, ts, meta_body(tid, sid, f"/home/dev/project-{i % 37}"))
        for seq in range(1, 4):
            data += frame(seq, ts, BODY_POOL[(i + seq) % len(BODY_POOL)])
        fd = os.open(day / f"rollout-{stamp}-{sid}.jsonl",
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, data)
        os.close(fd)


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


# ---------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------

def machine(work: Path) -> dict[str, Any]:
    env: dict[str, Any] = {
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "python": sys.version.split()[0], "platform": platform.platform(),
        "sqlite": sqlite3.sqlite_version, "orjson": orjson.__version__, "workdir": str(work),
    }
    with contextlib.suppress(OSError):
        env["loadavg_start"] = os.getloadavg()
    try:
        best = ("", "?", "?")
        with open("/proc/mounts") as f:
            for line in f:
                dev, mnt, fstype = line.split()[:3]
                if str(work).startswith(mnt) and len(mnt) > len(best[0]):
                    best = (mnt, fstype, dev)
        env["fs"] = best[1]
        wc = Path(f"/sys/block/{Path(best[2]).name}/queue/write_cache")
        if wc.exists():
            env["disk_write_cache"] = wc.read_text().strip()
    except OSError:
        pass
    return env


def fmt_s(x: float) -> str:
    if x < 1e-3:
        return f"{x * 1e6:.0f} us"
    if x < 1:
        return f"{x * 1e3:.1f} ms"
    return f"{x:.2f} s"


def spread(xs: list[float]) -> str:
    return f"[{fmt_s(min(xs))}..{fmt_s(max(xs))}]"


def rows_of(res: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """(case, subject, baseline, ratio, target, verdict) rows."""
    rows = []
    a = res["a"]
    ratio = a["recorder_ev_s"] / a["raw_ev_s"]
    rows.append((f"a  append written, {a['n_events']:,} x {a['line_bytes_mean']:.0f} B lines",
                 f"Recorder.append {a['recorder_ev_s']:,.0f} ev/s",
                 f"os.write {a['raw_ev_s']:,.0f} ev/s", f"{ratio:.2f}x of raw", ">= 0.33x",
                 "PASS" if ratio >= 1 / 3 else "MISS"))
    api = a["api_ev_s"] / a["raw_ev_s"]
    rows.append(("a' full API path (Session.record)",
                 f"{a['api_ev_s']:,.0f} ev/s; {a['api_rollout_bytes_per_event']:,.0f} B/ev on disk",
                 f"os.write {a['raw_ev_s']:,.0f} ev/s", f"{api:.3f}x of raw", "(info)", "-"))
    b = res["b"]
    ratio = b["recorder_ev_s"] / b["raw_ev_s"]
    rows.append((f"b  durable, {b['threads']} waiting threads, {b['n_events']:,} ev",
                 f"Recorder {b['recorder_ev_s']:,.0f} ev/s, {b['recorder_ev_per_fsync']:.1f} ev/fsync",
                 f"raw group commit {b['raw_ev_s']:,.0f} ev/s, {b['raw_ev_per_fsync']:.1f} ev/fsync",
                 f"{ratio:.2f}x", ">= 0.9x", "PASS" if ratio >= 0.9 else "MISS"))
    c = res["c"]
    ratio = median(c["reader_s"]) / median(c["raw_s"])
    rows.append((f"c  full read {c['n_events']:,} ev ({c['file_bytes'] / 1e6:.0f} MB), gc off both",
                 f"read_rollout {fmt_s(median(c['reader_s']))} {spread(c['reader_s'])}",
                 f"orjson/line {fmt_s(median(c['raw_s']))} {spread(c['raw_s'])}",
                 f"{ratio:.2f}x time", "<= 1.2x", "PASS" if ratio <= 1.2 else "MISS"))
    rows.append(("c' raw orjson/line with gc ON (reference)", "-",
                 f"{fmt_s(median(c['raw_gc_on_s']))}",
                 f"reader {median(c['reader_s']) / median(c['raw_gc_on_s']):.2f}x", "(info)", "-"))
    d = res["d"]
    ratio = median(d["large_s"]) / median(d["small_s"])
    rows.append((f"d  read_latest {d['large_events']:,} vs {d['small_events']:,} ev "
                 f"(snapshot/1000)",
                 f"{d['large_events']:,}: {fmt_s(median(d['large_s']))} "
                 f"({d['large_file_bytes'] / 1e6:.0f} MB)",
                 f"{d['small_events']:,}: {fmt_s(median(d['small_s']))} "
                 f"({d['small_file_bytes'] / 1e6:.1f} MB)",
                 f"{ratio:.2f}x", "<= 2x", "PASS" if ratio <= 2 else "MISS"))
    ratio = median(d["large_verified_s"]) / median(d["small_verified_s"])
    rows.append(("d' same + CRC check of the bytes before the snapshot (what resume does)",
                 f"{d['large_events']:,}: {fmt_s(median(d['large_verified_s']))}",
                 f"{d['small_events']:,}: {fmt_s(median(d['small_verified_s']))}",
                 f"{ratio:.2f}x", "(info)", "-"))
    e = res["e"]
    for key, label in (("index_s", "Store.list_threads (open)"),
                       ("open_index_s", "Store() + list_threads")):
        speed = median(e["scan_s"]) / median(e[key])
        rows.append((f"e  first page of {e['n_threads']:,} threads: {label}",
                     f"{fmt_s(median(e[key]))}",
                     f"dir scan {fmt_s(median(e['scan_s']))} {spread(e['scan_s'])}",
                     f"{speed:,.0f}x faster", ">= 100x", "PASS" if speed >= 100 else "MISS"))
    ratio = median(e["rebuild_s"]) / median(e["rebuild_scan_s"])
    rows.append((f"f  rebuild index, {e['n_threads']:,} rollouts",
                 f"Store.rebuild {fmt_s(median(e['rebuild_s']))} {spread(e['rebuild_s'])}",
                 f"dir scan {fmt_s(median(e['rebuild_scan_s']))} {spread(e['rebuild_scan_s'])}",
                 f"{ratio:.2f}x time", "<= 1.5x", "PASS" if ratio <= 1.5 else "MISS"))
    ratio = median(e["raw_rebuild_s"]) / median(e["rebuild_scan_s"])
    rows.append(("f' raw scan + raw 1-table SQLite insert (reference)",
                 f"raw rebuild {fmt_s(median(e['raw_rebuild_s']))} {spread(e['raw_rebuild_s'])}",
                 f"dir scan {fmt_s(median(e['rebuild_scan_s']))}", f"{ratio:.2f}x time",
                 "(info)", "-"))
    mb = 1e6
    rows.append(("g  peak memory c (tracemalloc)", f"read_rollout {c['peak_bytes']['reader'] / mb:,.0f} MB",
                 f"orjson/line {c['peak_bytes']['raw'] / mb:,.0f} MB",
                 f"{c['peak_bytes']['reader'] / c['peak_bytes']['raw']:.2f}x", "(info)", "-"))
    rows.append(("g  peak memory d (tracemalloc)",
                 f"{d['large_events']:,}: {d['peak_bytes']['large'] / mb:.2f} MB",
                 f"{d['small_events']:,}: {d['peak_bytes']['small'] / mb:.2f} MB",
                 f"{d['peak_bytes']['large'] / d['peak_bytes']['small']:.2f}x", "(info)", "-"))
    return rows


def print_table(rows: list[tuple[str, ...]]) -> None:
    head = ("case", "subject", "raw baseline", "ratio", "target", "")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    print(line.format(*head))
    print(line.format(*("-" * w for w in widths)))
    for r in rows:
        print(line.format(*r))


QUICK_NOTE = "QUICK sizes (verdicts indicative only: the targets are set for the full sizes)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke run, ~20 s)")
    ap.add_argument("--json", metavar="PATH", help="write every figure to this JSON file")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 5, quick 3)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    a = ap.parse_args()
    reps = a.reps or (3 if a.quick else 5)
    sizes = (dict(append=5_000, durable=800, full=20_000, small=10_000, large=100_000, threads=2_000)
             if a.quick else
             dict(append=20_000, durable=4_000, full=100_000, small=10_000, large=1_000_000,
                  threads=10_000))
    work = Path(tempfile.mkdtemp(prefix="skbench_", dir="/tmp"))
    res: dict[str, Any] = {"machine": machine(work), "quick": a.quick, "reps": reps,
                           "sizes": sizes}
    env = res["machine"]
    print(f"machine: nproc {env['nproc']}, Python {env['python']}, {env['platform']}, "
          f"SQLite {env['sqlite']}, orjson {env['orjson']}, fs {env.get('fs')}, "
          f"disk write cache: {env.get('disk_write_cache', '?')}, "
          f"loadavg {env.get('loadavg_start')}")
    print("note: shared, noisy machine (other sessions run beside this one): figures move ±10-30% "
          "between runs; fsync figures are optimistic on a write-back virtual disk.")
    print(f"medians of {reps} repetitions, subject and baseline alternating; files warm in the "
          f"page cache; {QUICK_NOTE if a.quick else 'full sizes'}; workdir {work}\n", flush=True)
    started = perf()
    try:
        steps = (("a", lambda: bench_append(work, sizes["append"], reps)),
                 ("b", lambda: bench_durable(work, sizes["durable"], reps)),
                 ("c", lambda: bench_read_full(work, sizes["full"], reps)),
                 ("d", lambda: bench_read_latest(work, sizes["small"], sizes["large"], reps)),
                 ("e", lambda: bench_listing(work, sizes["threads"], reps)))
        for key, step in steps:
            t0 = perf()
            res[key] = step()
            print(f"[{key} done in {perf() - t0:.1f} s]", flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    res["total_s"] = perf() - started
    with contextlib.suppress(OSError):
        res["machine"]["loadavg_end"] = os.getloadavg()
    rows = rows_of(res)
    res["table"] = [dict(zip(("case", "subject", "baseline", "ratio", "target", "verdict"), r, strict=True))
                    for r in rows]
    print()
    print_table(rows)
    misses = [r[0] for r in rows if r[5] == "MISS"]
    print(f"\n{len(misses)} target(s) missed; total {res['total_s']:.0f} s; "
          f"loadavg end {res['machine'].get('loadavg_end')}")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2, default=str))
        print(f"figures written to {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
