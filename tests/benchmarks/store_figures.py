"""How the store benchmarks take and show their figures: alternating repetitions, medians, peak
memory, the machine they ran on, and the table with ratios and targets."""

from __future__ import annotations

import contextlib
import gc
import os
import platform
import sqlite3
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from _bench import alternate as _alternate
from _bench import print_table  # noqa: F401 - the table bench_store prints

perf = time.perf_counter


def alternate(reps: int, cases: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    """`_bench.alternate` with a collection before each run; seconds per run."""
    return _alternate(reps, cases, collect=True)


def median(xs: list[float]) -> float:
    return statistics.median(xs)


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

