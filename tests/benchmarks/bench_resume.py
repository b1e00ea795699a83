"""Resume flat in history length (issue 13, rows 1-2 and 5): `--check-resume` of a thread the
product wrote itself, 1M events vs 10k, with and without compaction; peak RSS; rollout bytes.

    python tests/benchmarks/bench_resume.py [--quick] [--reps N] [--json OUT]

Threads are written through the Python API (`Keeper.start` + `Session.record`/`compact`, the
automatic snapshots included; nothing hand-made): ~500 B messages, an operation pair every 50
events, a todo update every 200, a cost record every 20. Each `--check-resume` is a fresh
`sessionkeeper` process (the console script), timed from spawn to exit, its peak RSS from wait4.
Also: one 50 MB message — the rollout must stay near 50 MB (issue 12 item 19).
Targets: 1M / 10k <= 2x, peak RSS <= 100 MB at 1M; the 50 MB message <= 1.2x its size on disk.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import (  # noqa: E402
    alternate,
    child_env,
    compile_server,
    loadavg,
    median,
    ms,
    print_table,
    row,
    run_child,
    sessionkeeper,
    spread,
)
from rollouts import WORDS  # noqa: E402

from sessionkeeper.api import Keeper  # noqa: E402


def git_repo(path: Path) -> Path:
    """A one-commit repository to record in."""
    path.mkdir(parents=True)
    env = child_env(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
                    GIT_COMMITTER_EMAIL="b@b")
    (path / "README").write_text("bench\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True)
    return path


def texts(n: int, seed: int) -> list[str]:
    """n message texts of ~500 bytes (no credential shapes)."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(70)) for _ in range(n)]


def write_thread(store: Path, repo: Path, n: int, *, compact_every: int = 0) -> tuple[str, float, int]:
    """(thread id, seconds, rollout bytes) of a thread of `n` events written through the API."""
    keeper = Keeper(store, durability="none")
    session = keeper.start(str(repo), title=f"{n} events")
    pool = texts(256, seed=n)
    record = session.record
    t0 = time.perf_counter()
    messages = 0
    i = 0
    while i < n:
        if i % 50 == 49:
            op = f"op-{i}"
            session.begin_operation(op, "shell", {"cmd": f"pytest -k case{i}"})
            session.finish_operation(op, result={"exit": 0, "out": "ok"})
            i += 2
            continue
        if i % 200 == 199:
            record({"type": "todo", "items": [{"id": str(k), "text": f"step {k}",
                                               "status": "done" if k < i % 7 else "pending"}
                                              for k in range(6)]})
        elif i % 20 == 19:
            record({"type": "cost", "model": "m", "input_tokens": 900, "output_tokens": 120,
                    "usd": 0.002})
        else:
            record({"type": "message", "role": ("user", "assistant")[i % 2],
                    "text": f"{i} {pool[i % len(pool)]}"})
            messages += 1
            if compact_every and messages % compact_every == 0:
                session.compact(f"summary of the first {messages} messages")
                i += 1  # the compact's lifecycle record counts as an event too
        i += 1
    session.close()
    return session.thread_id, time.perf_counter() - t0, Path(session.path).stat().st_size


def check(store: Path, repo: Path, thread: str) -> Any:
    """One `sessionkeeper --check-resume` process; exits 0 (ok) or the run is refused."""
    done = run_child([*sessionkeeper(), "--check-resume", thread, "--workspace", str(repo),
                      "--store", str(store), "--json"], env=child_env())
    if done.code != 0:
        raise SystemExit(f"--check-resume exited {done.code}: {done.out[:400]!r}")
    return done


def big_message(store: Path, repo: Path, size: int) -> dict[str, Any]:
    """Rollout bytes after one `size`-byte message and a snapshot (the session closes)."""
    keeper = Keeper(store)
    session = keeper.start(str(repo))
    session.record({"type": "message", "role": "user", "text": "x" * size})
    session.record({"type": "message", "role": "assistant", "text": "ok"})
    session.snapshot()
    session.close()
    rollout = Path(session.path).stat().st_size
    done = check(store, repo, session.thread_id)
    return {"message_bytes": size, "rollout_bytes": rollout, "check_s": done.seconds,
            "check_rss": done.peak_rss}


def main() -> int:
    """Generate, measure, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="100k instead of 1M events")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--json", metavar="PATH")
    a = ap.parse_args()
    small, large = 10_000, (100_000 if a.quick else 1_000_000)
    reps = a.reps or (3 if a.quick else 5)
    compile_server()
    work = Path(tempfile.mkdtemp(prefix="skbench_resume_", dir="/tmp"))
    print(f"Python {sys.version.split()[0]}; loadavg {loadavg()}; {small:,} vs {large:,} events; "
          f"{reps} alternating reps; workdir {work}", flush=True)
    res: dict[str, Any] = {"small": small, "large": large, "reps": reps, "load_start": loadavg()}
    try:
        repo = git_repo(work / "repo")
        threads: dict[str, tuple[Path, str]] = {}
        for name, n, every in (("small", small, 0), ("large", large, 0),
                               ("small_compacted", small, 1000), ("large_compacted", large, 1000)):
            store = work / f"store-{name}"
            thread, secs, size = write_thread(store, repo, n, compact_every=every)
            threads[name] = (store, thread)
            res[f"{name}_write_s"], res[f"{name}_rollout_bytes"] = secs, size
            print(f"[wrote {name}: {n:,} events in {secs:.1f} s through the API "
                  f"({n / secs:,.0f} ev/s), rollout {size / 1e6:.1f} MB]", flush=True)
        for pair in (("small", "large"), ("small_compacted", "large_compacted")):
            runs = alternate(reps, {k: (lambda k=k: check(*threads[k][:1], repo, threads[k][1]))
                                    for k in pair})
            for k in pair:
                res[f"{k}_check_s"] = [r.seconds for r in runs[k]]
                res[f"{k}_check_rss"] = max(r.peak_rss for r in runs[k])
        res["big"] = big_message(work / "store-big", repo, 50 * 1024 * 1024)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res["load_end"] = loadavg()
    rows = []
    for label, s, big in (("", "small", "large"), (" (compacted every 1,000)", "small_compacted",
                                                   "large_compacted")):
        ratio = median(res[f"{big}_check_s"]) / median(res[f"{s}_check_s"])
        rows.append((f"--check-resume {large:,} vs {small:,} ev{label}",
                     f"{spread(res[f'{big}_check_s'])}, {res[f'{big}_rollout_bytes'] / 1e6:.0f} MB",
                     f"{spread(res[f'{s}_check_s'])}", f"{ratio:.2f}x", "<= 2x",
                     "PASS" if ratio <= 2 else "MISS"))
        rss = res[f"{big}_check_rss"] / 1e6
        rows.append(row(f"  peak RSS at {large:,}{label}", f"{rss:.0f} MB",
                        f"{res[f'{s}_check_rss'] / 1e6:.0f} MB at {small:,}",
                        res[f"{big}_check_rss"] / res[f"{s}_check_rss"],
                        target="<= 100 MB", met=rss <= 100))
    b = res["big"]
    rows.append(row("one 50 MB message: rollout bytes", f"{b['rollout_bytes'] / 1e6:.1f} MB",
                    f"message {b['message_bytes'] / 1e6:.1f} MB",
                    b["rollout_bytes"] / b["message_bytes"], target="<= 1.2x",
                    met=b["rollout_bytes"] <= 1.2 * b["message_bytes"]))
    rows.append(row("  its --check-resume", f"{ms(b['check_s'])}, {b['check_rss'] / 1e6:.0f} MB RSS",
                    "-", b["check_rss"] / 1e6, target="(info)", met=None, unit=" MB"))
    print()
    print_table(rows)
    print(f"loadavg {res['load_start']} -> {res['load_end']}")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
