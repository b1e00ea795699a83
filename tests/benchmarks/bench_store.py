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
This file holds the write cases (a, b) and the run; the read cases are in store_reads.py, the
synthetic rollouts in rollouts.py, the timing and the table in store_figures.py.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rollouts import message_bodies, now_ts  # noqa: E402
from store_figures import alternate, machine, median, perf, print_table, rows_of  # noqa: E402
from store_reads import bench_listing, bench_read_full, bench_read_latest  # noqa: E402

from sessionkeeper.api import Keeper  # noqa: E402
from sessionkeeper.events import Durability  # noqa: E402
from sessionkeeper.store.codec import frame  # noqa: E402
from sessionkeeper.store.recorder import Recorder  # noqa: E402
from sessionkeeper.store.sinks import FileSink  # noqa: E402

APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC


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
    print(f"total {res['total_s']:.0f} s; "
          f"loadavg end {res['machine'].get('loadavg_end')}")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2, default=str))
        print(f"figures written to {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
