"""LangGraph checkpointer benchmark: SessionKeeperSaver vs langgraph-checkpoint-sqlite's SqliteSaver.

    python tests/benchmarks/bench_frameworks.py [--quick] [--json OUT.json] [--reps N]

Cases (issue 16, "Benchmarks"), one process, side by side, the order flipping every repetition:
  a  put + put_writes throughput (steps/s; a step = put_writes of one task's two writes, then the
     next checkpoint, one of its three channels changed), at equal durability: ours `durable`
     (fsync per put and per put_writes, what LangGraph's sync mode needs) vs SqliteSaver in WAL
     with synchronous=FULL (its default: an fsync per commit); target >= 1x;
  b  the same in the default modes: ours `written` (in the kernel at return: survives a process
     kill) vs SqliteSaver's default (FULL), and, for a like-for-like reading, vs SQLite
     synchronous=NORMAL (no fsync per commit either);
  c  get_tuple of the newest checkpoint of one thread holding 10k checkpoints vs 100: from the
     saver that wrote them (the thread's live state), and from another saver reading the store
     (its first call folds the latest snapshot and the tail after it and checks the CRC of the
     bytes before the snapshot, linear in the log's size; later calls reuse that while the log
     is unchanged); target <= 2x; SqliteSaver's figure beside it.
Values are small (~200 B); every run uses fresh temp dirs, removed at the end. Ratios are the
figures to read (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402

from sessionkeeper.integrations.langgraph import SessionKeeperSaver  # noqa: E402

perf = time.perf_counter
Saver = BaseCheckpointSaver[Any]
TEXT = "the quick brown fox jumps over the lazy dog " * 5  # ~220 B


def workload(saver: Saver, steps: int, thread: str = "bench") -> float:
    """Run `steps` steps on one thread; return the seconds taken."""
    config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    versions: dict[str, Any] = {}
    values: dict[str, Any] = {"a": TEXT, "b": TEXT, "c": 0}
    start = perf()
    for n in range(steps):
        channel = "abc"[n % 3]
        values[channel] = f"{TEXT}{n}" if channel != "c" else n
        versions[channel] = saver.get_next_version(versions.get(channel), None)
        new = {channel: versions[channel]} if len(versions) == 3 else dict(versions)
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = dict(values)
        checkpoint["channel_versions"] = dict(versions)
        stored = saver.put(config, checkpoint, {"source": "loop", "step": n}, new)
        task = str(uuid.uuid5(uuid.NAMESPACE_OID, f"{thread}:{n}"))  # LangGraph's task ids are uuids
        saver.put_writes(stored, [("a", f"w{n}"), ("c", n)], task_id=task)
        config = stored
    return perf() - start


def ours(root: Path, durability: str) -> SessionKeeperSaver:
    return SessionKeeperSaver(root / "store", durability=durability)


def sqlite(root: Path, synchronous: str | None) -> SqliteSaver:
    conn = sqlite3.connect(root / "checkpoints.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    if synchronous:
        conn.execute(f"PRAGMA synchronous={synchronous}")
    return saver


def close(saver: Saver) -> None:
    if isinstance(saver, SessionKeeperSaver):
        saver.close()
    else:
        saver.conn.close()  # type: ignore[attr-defined]


def throughput(make: Callable[[Path], Saver], steps: int) -> float:
    """Steps per second of one fresh saver."""
    root = Path(tempfile.mkdtemp(prefix="skbench_fw_"))
    try:
        saver = make(root)
        try:
            return steps / workload(saver, steps)
        finally:
            close(saver)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def side_by_side(a: Callable[[Path], Saver], b: Callable[[Path], Saver],
                 steps: int, reps: int) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for rep in range(reps):
        first, second = (a, b) if rep % 2 == 0 else (b, a)
        r1, r2 = throughput(first, steps), throughput(second, steps)
        xs.append(r1 if first is a else r2)
        ys.append(r2 if first is a else r1)
    return xs, ys


def latency_us(fn: Callable[[], Any], calls: int) -> float:
    """Median microseconds of `fn` over `calls` calls."""
    times = []
    for _ in range(calls):
        t = perf()
        fn()
        times.append(perf() - t)
    return statistics.median(times) * 1e6


def get_latest(sizes: tuple[int, int], calls: int) -> dict[int, Any]:
    """get_tuple of the newest checkpoint at each size: live, new saver, sqlite."""
    config: Any = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}
    out: dict[int, Any] = {}
    for size in sizes:
        root = Path(tempfile.mkdtemp(prefix="skbench_fw_"))
        try:
            saver = ours(root, "written")
            workload(saver, size)
            live = latency_us(partial(saver.get_tuple, config), calls)
            saver.close()
            firsts = []
            for _ in range(7):  # a new saver's first read: latest snapshot + tail, prefix CRC
                reader = ours(root, "written")
                firsts.append(latency_us(partial(reader.get_tuple, config), 1))
                reader.close()
            first = statistics.median(firsts)
            reader = ours(root, "written")
            cold = latency_us(partial(reader.get_tuple, config), calls)
            found = reader.get_tuple(config)
            assert found is not None and found.metadata["step"] == size - 1
            reader.close()
            peer = sqlite(root, None)
            workload(peer, size)
            theirs = latency_us(partial(peer.get_tuple, config), calls)
            close(peer)
            rollout = sum(p.stat().st_size for p in (root / "store").rglob("*.jsonl"))
            out[size] = {"live_us": live, "first_read_us": first, "new_saver_us": cold,
                         "sqlite_us": theirs,
                         "rollout_bytes": rollout}
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer steps and repetitions")
    ap.add_argument("--json", metavar="PATH", help="write every figure to this JSON file")
    ap.add_argument("--reps", type=int, default=None)
    args = ap.parse_args()
    reps = args.reps or (2 if args.quick else 5)
    durable_steps, default_steps = (200, 1000) if args.quick else (1000, 4000)
    big = 2_000 if args.quick else 10_000
    print(f"python {platform.python_version()}, sqlite {sqlite3.sqlite_version}, reps {reps}")
    figures: dict[str, Any] = {}

    def row(name: str, mine: list[float], theirs: list[float], target: str) -> None:
        m, t = statistics.median(mine), statistics.median(theirs)
        figures[name] = {"ours_steps_s": m, "sqlite_steps_s": t, "ratio": m / t}
        print(f"{name:<58} ours {m:>9,.0f} steps/s   sqlite {t:>9,.0f} steps/s   "
              f"{m / t:5.2f}x  {target}")

    mine, theirs = side_by_side(lambda r: ours(r, "durable"), lambda r: sqlite(r, None),
                                durable_steps, reps)
    row("a  equal durability: durable vs WAL synchronous=FULL", mine, theirs, "(target >= 1x)")
    mine, theirs = side_by_side(lambda r: ours(r, "written"), lambda r: sqlite(r, None),
                                default_steps, reps)
    row("b  defaults: written vs SqliteSaver default (FULL)", mine, theirs, "(target >= 1x)")
    mine, theirs = side_by_side(lambda r: ours(r, "written"), lambda r: sqlite(r, "NORMAL"),
                                default_steps, reps)
    row("b' no fsync per op: written vs WAL synchronous=NORMAL", mine, theirs, "(reported)")
    latest = get_latest((100, big), 50 if args.quick else 200)
    figures["get_tuple_latest"] = {str(k): v for k, v in latest.items()}
    small, large = latest[100], latest[big]
    for key, label in (("live_us", "from the live saver"), ("new_saver_us", "by a reading saver"),
                       ("first_read_us", "a new saver's first"), ("sqlite_us", "SqliteSaver")):
        ratio = large[key] / small[key]
        target = {"live_us": "(target <= 2x)", "new_saver_us": "(target <= 2x)",
                  "first_read_us": "(reported: CRC of the prefix)"}.get(key, "(peer)")
        figures["get_tuple_latest"][f"ratio_{key}"] = ratio
        print(f"c  get_tuple latest {label:<22} {big:>6} vs 100: {large[key]:8.1f} us vs "
              f"{small[key]:8.1f} us   {ratio:5.2f}x  {target}")
    print(f"   rollout bytes: {large['rollout_bytes']:,} at {big}, "
          f"{small['rollout_bytes']:,} at 100")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
