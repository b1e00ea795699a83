"""Agent threads in the index, side by side with their baselines, one run (ratios printed).

    python tests/benchmarks/bench_agent_index.py [--small] [--sessions N] [--native N] [--reps N]

A synthetic Claude projects directory (bench_agents.generate: default 2,000 sessions, ~1 GB) and
a store of 10,000 native threads (rollouts.make_store) are generated first. Then:
  a  first import INTO THE INDEX (Keeper.import_agents: stat, read, translate, redact, rows and
     checkpoints written to state.db), in a fresh child process per repetition on an empty
     store, vs the raw orjson line-by-line parse of bench_agents (same child setup); wall and CPU
     time, peak RSS (VmHWM). Targets of the issue: <= 1.5x the raw time, <= 60 MB.
  b  re-import after one line is appended to one file (in-process, the index already holds
     every file): stat of every file against the stored stamps, the one file read from its
     checkpoint, its row and checkpoint written; 5 rounds, median (target <= 10 ms).
  c  the picker's first page (Keeper.threads, 50 rows) of 2,000 imported + 10,000 native threads,
     with the agents' roots watched (what the editor does between changes: no stat pass), vs the
     native-only page of the 10,000 native threads (target <= 2x); plus, for information, the
     same page when nothing watches the roots (every listing stats the 2,000 files: the CLI).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parents[1]))

from tests.benchmarks import bench_agents, rollouts  # noqa: E402

perf = time.perf_counter


def _sources(root: Path) -> Any:
    from sessionkeeper.agents.importer import AgentSources

    return AgentSources(agents=("claude",), roots={"claude": (str(root),)})


def child(kind: str, root: Path, store: Path) -> dict[str, Any]:
    """One measurement in this (fresh) process: the import into the index, or the raw parse."""
    if kind == "raw":
        raw = bench_agents.child_raw(root)
        return {"wall_s": raw["seconds"], "cpu_s": raw["cpu"], "rss_mb": raw["rss_kb"] / 1024}
    from sessionkeeper.api import Keeper

    keeper = Keeper(store, agents=_sources(root))
    keeper.store.index()  # the store exists before the clock starts (as in the product)
    cpu, wall = time.process_time(), perf()
    counts = keeper.import_agents(force=True)
    out = {"wall_s": perf() - wall, "cpu_s": time.process_time() - cpu,
           "rss_mb": bench_agents._hwm_kb() / 1024}
    assert counts is not None and counts.unreadable == 0, counts
    out["threads"] = counts.threads
    return out


def run_child(kind: str, root: Path, work: Path) -> dict[str, Any]:
    store = work / f"store-{kind}-{time.monotonic_ns()}"
    done = subprocess.run([sys.executable, __file__, "--child", kind, str(root), str(store)],
                          capture_output=True, text=True, timeout=1800, check=True)
    shutil.rmtree(store, ignore_errors=True)
    return orjson.loads(done.stdout.strip().splitlines()[-1])


def reimport(keeper: Any, root: Path, rounds: int) -> list[float]:
    """Append one line to one file per round, time the listing's import of it."""
    files = sorted(root.glob("projects/*/*.jsonl"))
    out: list[float] = []
    fulls: list[int] = []
    for n in range(rounds):
        path = files[(n * 997) % len(files)]
        with open(path, "ab") as handle:
            handle.write(orjson.dumps({"type": "last-prompt", "lastPrompt": f"again {n}",
                                       "sessionId": path.stem}) + b"\n")
        t = perf()
        counts = keeper.import_agents(force=True)
        out.append(perf() - t)
        assert counts.appended + counts.read == 1, counts
        fulls.append(counts.read)
    if any(fulls):
        print(f"note: {sum(fulls)} of {rounds} re-imports read the file whole", flush=True)
    return out


def page(keeper: Any, inner: int = 20, *, stat_pass: bool = False) -> float:
    """One first page (50 threads), per call, over `inner` calls (`stat_pass`: every call stats
    the agents' files first, as a listing does when nothing watches them)."""
    t = perf()
    for _ in range(inner):
        if stat_pass:
            keeper.agents_changed()
        rows = keeper.threads(limit=50)
    assert len(rows) == 50
    return (perf() - t) / inner


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=3, metavar=("KIND", "ROOT", "STORE"))
    parser.add_argument("--small", action="store_true", help="200 sessions, 2,000 native threads")
    parser.add_argument("--sessions", type=int, default=None)
    parser.add_argument("--native", type=int, default=None)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", default=None, help="write the figures to this file")
    args = parser.parse_args()
    if args.child:
        kind, root, store = args.child
        print(orjson.dumps(child(kind, Path(root), Path(store))).decode())
        return 0
    sessions = args.sessions or (200 if args.small else 2000)
    native = args.native or (2000 if args.small else 10_000)
    from sessionkeeper.api import Keeper

    with tempfile.TemporaryDirectory(prefix="skbench_agent_index_") as tmp:
        work = Path(tmp)
        root = work / "claude"
        t = perf()
        size = bench_agents.generate(root, sessions)
        rollouts.make_store(work / "native", native)
        Keeper(work / "native").reindex()
        print(f"generated {size['files']} transcripts ({size['lines']} lines, "
              f"{size['bytes'] / 1e9:.2f} GB) and {native} native threads in {perf() - t:.0f} s",
              flush=True)
        for path in root.rglob("*.jsonl"):  # warm the page cache
            path.read_bytes()
        ours, raw = [], []
        for rep in range(args.reps):
            for kind in (("ours", "raw") if rep % 2 == 0 else ("raw", "ours")):
                (ours if kind == "ours" else raw).append(run_child(kind, root, work))
        combined = work / "combined"
        shutil.copytree(work / "native", combined)
        keeper = Keeper(combined, agents=_sources(root))
        keeper.import_agents(force=True)
        again = reimport(keeper, root, 5)
        native_only = Keeper(work / "native")
        watched = Keeper(combined, agents=_sources(root))
        watched.import_agents(force=True)
        watched.watching_agents = True  # what the editor's roots watcher makes of it
        unwatched = Keeper(combined, agents=_sources(root))
        pages: dict[str, list[float]] = {"native": [], "watched": [], "unwatched": []}
        for rep in range(max(args.reps, 5)):
            order = list(pages) if rep % 2 == 0 else list(reversed(pages))
            for name in order:
                keeper_of = {"native": native_only, "watched": watched, "unwatched": unwatched}
                pages[name].append(page(keeper_of[name], stat_pass=name == "unwatched"))
    figures = {"sessions": sessions, "native": native, "size": size, "ours": ours, "raw": raw,
               "reimport_s": again, "pages_s": pages}
    report(figures)
    if args.json:
        Path(args.json).write_text(orjson.dumps(figures, option=orjson.OPT_INDENT_2).decode())
    return 0


def report(f: dict[str, Any]) -> None:
    med = statistics.median
    ours_wall, raw_wall = med(x["wall_s"] for x in f["ours"]), med(x["wall_s"] for x in f["raw"])
    ours_cpu, raw_cpu = med(x["cpu_s"] for x in f["ours"]), med(x["cpu_s"] for x in f["raw"])
    rss = max(x["rss_mb"] for x in f["ours"])
    native, watched = med(f["pages_s"]["native"]), med(f["pages_s"]["watched"])
    unwatched = med(f["pages_s"]["unwatched"])
    again = med(f["reimport_s"])
    rows = [
        ("a first import into the index", f"{ours_wall:.3f} s (cpu {ours_cpu:.3f} s)",
         f"raw orjson {raw_wall:.3f} s (cpu {raw_cpu:.3f} s)", f"{ours_cpu / raw_cpu:.2f}x cpu, "
         f"{ours_wall / raw_wall:.2f}x wall", "<= 1.5x", _ok(ours_cpu / raw_cpu <= 1.5)),
        ("a peak RSS of the import", f"{rss:.1f} MB", "-", "-", "<= 60 MB", _ok(rss <= 60)),
        ("b re-import, 1 line appended", f"{again * 1e3:.1f} ms (best {min(f['reimport_s']) * 1e3:.1f})",
         f"first import {ours_wall:.3f} s", f"{ours_wall / again:.0f}x faster", "<= 10 ms",
         _ok(again <= 0.010)),
        (f"c picker page, {f['sessions']} imported + {f['native']} native (watched)",
         f"{watched * 1e3:.2f} ms", f"native-only {native * 1e3:.2f} ms",
         f"{watched / native:.2f}x", "<= 2x", _ok(watched / native <= 2)),
        ("c same page, roots not watched (stat pass)", f"{unwatched * 1e3:.2f} ms",
         f"native-only {native * 1e3:.2f} ms", f"{unwatched / native:.2f}x", "(info)", "-"),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    print("\nagent threads in the index (medians)")
    for r in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def _ok(flag: bool) -> str:
    return "met" if flag else "MISSED"


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
