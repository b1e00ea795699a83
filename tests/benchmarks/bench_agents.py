"""Importing Claude Code transcripts, side by side with a raw orjson parse and ccusage, one run.

    python tests/benchmarks/bench_agents.py [--small] [--sessions N] [--reps N] [--json OUT] [--keep]

A synthetic Claude projects directory is generated first (default 2,000 sessions in 40 projects,
~115k lines of ~8.7 KB: ~1 GB; `--small`: 100 sessions), then, each in a fresh child process
(timed inside it, wall clock and CPU time; the verdict of a uses the CPU-time ratio, which other
work on a shared machine skews least; peak RSS = the child's VmHWM), alternating the order:
  a  first import: ClaudeAgent.changes from no checkpoints, then read() of every file (discovery,
     the incremental reader, translation to our records, the SessionSummary and Checkpoint an
     index keeps; each Read dropped once those are kept) vs a raw Python orjson line-by-line parse
     extracting session id, cwd, branch, first/last timestamp and token usage per file
     (targets: <= 1.5x the raw time, peak RSS <= 60 MB);
  b  re-import after one line is appended to one file: changes() with the checkpoints of a, then
     read() of what changed (every file is stat'ed; only the new line is parsed); 5 rounds, each
     on another file, median and best (targets: <= 10 ms at 2,000 files, >= 50x faster than the
     raw full parse); and 9 re-scans with nothing changed;
  c  ccusage (the peer: it reads Claude Code logs too), `ccusage session --json --offline` with
     CLAUDE_CONFIG_DIR pointed at the same directory, when `npm install ccusage@latest` works
     (installed into ${XDG_CACHE_HOME:-~/.cache}/sessionkeeper-agents/ccusage-<version>); when
     latest does not run here, why is printed and 20.0.24 (the version the issue measured) is run
     too. Time and RSS are GNU time's (wall clock, max RSS), printed beside ours.
The page cache is warmed with one plain read of every file before the first measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

perf = time.perf_counter
WORDS = ["the", "payment", "rounding", "bug", "fix", "test", "passes", "refactor", "module", "function",
         "call", "tool", "result", "assistant", "user", "review", "diff", "commit", "branch", "session",
         "keeper", "store", "index", "rollout"]


# -- the synthetic projects directory -----------------------------------------------------------
def _text(rng: random.Random, size: int) -> str:
    out, n = [], 0
    while n < size:
        word = rng.choice(WORDS)
        out.append(word)
        n += len(word) + 1
    return " ".join(out)


def _session_lines(rng: random.Random, sid: str, cwd: str, n_lines: int) -> list[bytes]:
    """One transcript of about n_lines lines shaped like Claude Code 2.1's (user, assistant, tools)."""
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
            "version": "2.1.332", "gitBranch": "feature/bench", "entrypoint": "cli"}
    lines: list[bytes] = [orjson.dumps({"type": "queue-operation", "operation": "enqueue",
                                        "timestamp": "2026-11-01T09:00:00.000Z", "sessionId": sid})]
    parent = None
    second = 0

    def add(kind: str, **fields: Any) -> None:
        nonlocal parent, second
        second += 1
        uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        ts = f"2026-11-01T{9 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z"
        lines.append(orjson.dumps({"parentUuid": parent, **base, "type": kind, "uuid": uid,
                                   "timestamp": ts, **fields}))
        parent = uid

    add("user", message={"role": "user", "content": _text(rng, rng.randint(100, 1500))},
        permissionMode="default")
    turn = 0
    while len(lines) < n_lines - 3:
        turn += 1
        usage = {"input_tokens": rng.randint(100, 5000), "output_tokens": rng.randint(10, 900),
                 "cache_creation_input_tokens": rng.randint(0, 3000),
                 "cache_read_input_tokens": rng.randint(0, 90000), "service_tier": "standard"}
        msg = {"id": f"msg_{sid[:8]}_{turn}", "type": "message", "role": "assistant",
               "model": "claude-sonnet-5", "stop_reason": "tool_use", "usage": usage}
        add("assistant", requestId=f"req_{turn}", message={
            **msg, "content": [{"type": "text", "text": _text(rng, rng.randint(200, 2500))}]})
        call = f"toolu_{uuid.UUID(int=rng.getrandbits(128)).hex[:24]}"
        add("assistant", requestId=f"req_{turn}", message={**msg, "content": [
            {"type": "tool_use", "id": call, "name": "Bash",
             "input": {"command": f"pytest -q tests/test_{turn}.py", "description": "run tests"}}]})
        out = _text(rng, int(rng.expovariate(1 / 24000)) + 500)
        add("user", message={"role": "user", "content": [
            {"tool_use_id": call, "type": "tool_result", "content": out[:4000], "is_error": False}]},
            toolUseResult={"stdout": out, "stderr": "", "interrupted": False, "isImage": False})
        if turn % 4 == 0:
            add("user", message={"role": "user", "content": _text(rng, rng.randint(50, 800))},
                permissionMode="default")
    add("system", subtype="stop_hook_summary", hookCount=0, hookErrors=[], level="suggestion")
    lines.append(orjson.dumps({"type": "last-prompt", "lastPrompt": "go", "leafUuid": parent,
                               "sessionId": sid}))
    lines.append(orjson.dumps({"type": "cost-state", "sessionId": sid, "totalCostUSD": rng.random() * 3,
                               "modelUsage": {"claude-sonnet-5": {"costUSD": rng.random() * 3}}}))
    return lines


def generate(root: Path, sessions: int, *, seed: int = 7) -> dict[str, Any]:
    """Write the synthetic CLAUDE_CONFIG_DIR; return its size in files, lines and bytes."""
    rng = random.Random(seed)
    lines = size = 0
    for i in range(sessions):
        project = root / "projects" / f"-home-dev-work-project-{i % 40:02d}"
        project.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        body = b"\n".join(_session_lines(rng, sid, f"/home/dev/work/project-{i % 40:02d}",
                                         max(8, int(rng.gauss(57.5, 20))))) + b"\n"
        (project / f"{sid}.jsonl").write_bytes(body)
        lines += body.count(b"\n")
        size += len(body)
    return {"files": sessions, "lines": lines, "bytes": size}


# -- what runs in a child process ---------------------------------------------------------------
def _hwm_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


def child_raw(root: Path) -> dict[str, Any]:
    """The raw baseline: orjson per line; session id, cwd, branch, timestamps, usage per file."""
    start, cpu = perf(), time.process_time()
    out = {}
    for path in sorted(root.glob("projects/*/*.jsonl")):
        sid = cwd = branch = first = last = None
        tokens_in = tokens_out = 0
        with open(path, "rb") as handle:
            for line in handle:
                d = orjson.loads(line)
                sid = sid or d.get("sessionId")
                cwd = d.get("cwd") or cwd
                branch = d.get("gitBranch") or branch
                ts = d.get("timestamp")
                if ts:
                    first = first or ts
                    last = ts
                message = d.get("message")
                if isinstance(message, dict) and isinstance(message.get("usage"), dict):
                    tokens_in += message["usage"].get("input_tokens", 0)
                    tokens_out += message["usage"].get("output_tokens", 0)
        out[str(path)] = (sid, cwd, branch, first, last, tokens_in, tokens_out)
    return {"seconds": perf() - start, "cpu": time.process_time() - cpu, "files": len(out),
            "rss_kb": _hwm_kb()}


def child_ours(root: Path, *, append_one: bool) -> dict[str, Any]:
    """ClaudeAgent.changes from no checkpoints, each file read; with append_one, one line more."""
    from sessionkeeper import agents
    from sessionkeeper.agents import reading  # noqa: F401 - imported before the clock starts

    claude = agents.get("claude")
    start, cpu = perf(), time.process_time()
    checkpoints = {}
    lines = 0
    for file in claude.changes([root], checkpoints={}).changed:
        read = claude.read(file)  # the index keeps read.summary and read.checkpoint, then drops it
        checkpoints[str(file.path)] = read.checkpoint
        lines += read.lines_parsed
    elapsed, cpu = perf() - start, time.process_time() - cpu
    result: dict[str, Any] = {"seconds": elapsed, "cpu": cpu, "files": len(checkpoints), "lines": lines,
                              "rss_kb": _hwm_kb()}
    if append_one:
        paths = sorted(checkpoints)
        rounds, appended = [], []
        for n in range(5):  # each round: one line appended to another file, then a re-import
            target = paths[(len(paths) * (2 * n + 1)) // 10]
            line = orjson.dumps({"type": "custom-title", "sessionId": Path(target).stem,
                                 "customTitle": f"renamed {n}"}) + b"\n"
            with open(target, "ab") as handle:
                handle.write(line)
            appended.append((target, len(line)))
            start = perf()
            delta = claude.changes([root], checkpoints=checkpoints)
            read_now = []
            for file in delta.changed:
                read = claude.read(file, checkpoints.get(str(file.path)))
                checkpoints[str(file.path)] = read.checkpoint
                read_now.append((read.mode, read.lines_parsed))
            rounds.append(perf() - start)
            result["reimport"] = {"unchanged": len(delta.unchanged), "read": read_now}
        result["reimport"].update(median=statistics.median(rounds), best=min(rounds))
        still = []
        for _ in range(9):  # nothing changed since: every file stat'ed, none read
            start = perf()
            assert not claude.changes([root], checkpoints=checkpoints).changed
            still.append(perf() - start)
        result["rescan"] = {"median": statistics.median(still), "best": min(still)}
        result["rss_kb_after_reimport"] = _hwm_kb()
        for target, length in appended:  # leave the directory as it was generated
            with open(target, "rb+") as handle:
                handle.truncate(os.path.getsize(target) - length)
    return result


def run_child(kind: str, root: Path) -> dict[str, Any]:
    """One measurement in a fresh interpreter."""
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(root)], capture_output=True,
                         text=True, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(f"child {kind} failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


# -- ccusage ------------------------------------------------------------------------------------
PEER_FALLBACK = "20.0.24"  # the ccusage the issue measured (its native linux-x64 binary is published)


def ccusage(root: Path, reps: int) -> list[dict[str, Any]]:
    """ccusage@latest (and, when latest does not run here, PEER_FALLBACK), each installed from npm."""
    try:
        latest = subprocess.run(["npm", "view", "ccusage@latest", "version"], capture_output=True,
                                text=True, timeout=120, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return [{"version": "latest", "why": f"npm view ccusage@latest failed: {exc}"}]
    out = [ccusage_version(root, latest, reps)]
    if "seconds" not in out[0] and latest != PEER_FALLBACK:
        out.append(ccusage_version(root, PEER_FALLBACK, reps))
    return out


def ccusage_version(root: Path, version: str, reps: int) -> dict[str, Any]:
    """Install one ccusage version (cached) and time `ccusage session --json --offline` on the root."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sessionkeeper-agents"
    prefix = cache / f"ccusage-{version}"
    exe = prefix / "node_modules/.bin/ccusage"
    try:
        if not exe.exists():
            prefix.mkdir(parents=True, exist_ok=True)
            (prefix / "package.json").write_text('{"private": true}\n')
            subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                            f"ccusage@{version}"], cwd=prefix, capture_output=True, text=True,
                           timeout=900, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        return {"version": version, "why": f"npm install ccusage@{version} failed: {str(detail)[-300:]}"}
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(root), "HOME": str(root.parent)}
    runs = []
    for _ in range(reps):
        done = subprocess.run(["/usr/bin/time", "-f", "%e %M", str(exe), "session", "--json", "--offline"],
                              capture_output=True, text=True, env=env, timeout=3600)
        if done.returncode != 0:
            why = done.stderr.strip().splitlines()[0] if done.stderr.strip() else f"exit {done.returncode}"
            return {"version": version, "why": f"installs, but does not run here: {why[:200]}"}
        seconds, rss = done.stderr.strip().splitlines()[-1].split()
        runs.append((float(seconds), int(rss), len(json.loads(done.stdout).get("sessions", []))))
    return {"version": version, "seconds": statistics.median(r[0] for r in runs),
            "rss_kb": max(r[1] for r in runs), "sessions": runs[-1][2]}


# -- the run ------------------------------------------------------------------------------------
def main() -> int:
    """Generate, measure, print the table (and optionally the JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", action="store_true", help="100 sessions instead of 2,000")
    ap.add_argument("--sessions", type=int, default=None)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the generated directory")
    ap.add_argument("--no-ccusage", action="store_true")
    ap.add_argument("--child", nargs=2, metavar=("KIND", "ROOT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, where = args.child
        result = child_raw(Path(where)) if kind == "raw" else child_ours(Path(where),
                                                                          append_one=kind == "reimport")
        print(json.dumps(result))
        return 0
    sessions = args.sessions or (100 if args.small else 2000)
    work = Path(tempfile.mkdtemp(prefix="skbench_agents_"))
    root = work / "claude"
    try:
        start = perf()
        data = generate(root, sessions)
        print(f"generated {data['files']} sessions, {data['lines']:,} lines, {data['bytes'] / 1e9:.3f} GB "
              f"(avg {data['bytes'] / data['lines'] / 1024:.1f} KiB/line) in {perf() - start:.1f} s")
        for path in root.glob("projects/*/*.jsonl"):  # warm the page cache for everyone
            path.read_bytes()
        ours: list[dict[str, Any]] = []
        raw: list[dict[str, Any]] = []
        for rep in range(args.reps):
            order = [("ours", ours), ("raw", raw)] if rep % 2 == 0 else [("raw", raw), ("ours", ours)]
            for kind, sink in order:
                sink.append(run_child(kind, root))
        re = run_child("reimport", root)
        peer = [{"version": "-", "why": "--no-ccusage"}] if args.no_ccusage else ccusage(root, args.reps)
        report(data, ours, raw, re, peer, args.json)
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def report(data: dict[str, Any], ours: list[dict[str, Any]], raw: list[dict[str, Any]],
           re: dict[str, Any], peer: list[dict[str, Any]], out: Path | None) -> None:
    """Print the side-by-side table with ratios and targets."""
    t_ours = statistics.median(r["seconds"] for r in ours)
    t_raw = statistics.median(r["seconds"] for r in raw)
    c_ours = statistics.median(r["cpu"] for r in ours)
    c_raw = statistics.median(r["cpu"] for r in raw)
    rss_ours = max(r["rss_kb"] for r in ours) / 1024
    rss_raw = max(r["rss_kb"] for r in raw) / 1024
    t_re, t_scan = re["reimport"]["median"], re["rescan"]["median"]
    rows = [
        ("a first import (ours)", f"{t_ours:.3f} s", f"{rss_ours:.1f} MB",
         f"{t_ours / t_raw:.2f}x raw (CPU {c_ours:.3f} s: {c_ours / c_raw:.2f}x)", "<= 1.5x raw, <= 60 MB",
         _ok(c_ours / c_raw <= 1.5 and rss_ours <= 60)),
        ("a raw orjson parse", f"{t_raw:.3f} s", f"{rss_raw:.1f} MB", f"1.00x (CPU {c_raw:.3f} s)", "", ""),
        ("b re-import, 1 line appended", f"{t_re * 1e3:.2f} ms (best {re['reimport']['best'] * 1e3:.2f})",
         f"{re['rss_kb_after_reimport'] / 1024:.1f} MB", f"{t_raw / t_re:.0f}x faster than raw",
         "<= 10 ms, >= 50x", _ok(t_re <= 0.010 and t_raw / t_re >= 50)),
        ("b re-scan, nothing changed", f"{t_scan * 1e3:.2f} ms (best {re['rescan']['best'] * 1e3:.2f})",
         "", f"{t_raw / t_scan:.0f}x faster than raw", "", ""),
    ]
    for one in peer:
        if "seconds" in one:
            rows.append((f"c ccusage {one['version']} session --json", f"{one['seconds']:.3f} s",
                         f"{one['rss_kb'] / 1024:.1f} MB", f"ours {t_ours / one['seconds']:.2f}x its time, "
                         f"{rss_ours / (one['rss_kb'] / 1024):.2f}x its RSS", "peer (no target)", ""))
        else:
            rows.append((f"c ccusage {one['version']}", "-", "-", one["why"], "peer", ""))
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    print()
    for row in [("case", "time", "peak RSS", "ratio", "target", "")] + rows:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    print(f"\nre-import: {re['reimport']['unchanged']} files unchanged (stat only), "
          f"read {re['reimport']['read']}; "
          f"first import parsed {ours[0]['lines']:,} lines in {ours[0]['files']} files; "
          f"repetitions: ours {[round(r['seconds'], 3) for r in ours]}, "
          f"raw {[round(r['seconds'], 3) for r in raw]}")
    if out is not None:
        out.write_text(json.dumps({"data": data, "ours": ours, "raw": raw, "reimport": re, "ccusage": peer},
                                  indent=1))


def _ok(flag: bool) -> str:
    return "ok" if flag else "MISSED"


if __name__ == "__main__":
    sys.exit(main())
