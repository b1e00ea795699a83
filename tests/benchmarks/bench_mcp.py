"""MCP tool latency: a call of `sessionkeeper mcp`'s tools through stdio (the SDK's own client, the
server as the agents start it), side by side with the same query in-process (the tool function
over a Keeper, no transport), on a 10,000-event hook journal in a real git repository.

Run as a script (pytest does not collect bench_*.py):

    PYTHONPATH=server python tests/benchmarks/bench_mcp.py [--events 10000] [--runs 30]

The journal is written through the journal session's own record path: shell calls started and
committed, file versions of the repository's files, and the turn marker the prompt hook leaves
(so `drift_since` compares from the start of the current turn, 200 records before the end).
Warm: the server is up, its imports done; two cases — the journal unchanged since the last call
(the read is kept), and one record appended before each call, as the agent's PreToolUse hook
appends the call itself (the journal is replayed again; the state at the turn's start is kept).
Calls alternate between stdio and in-process so machine noise hits both alike. Prints medians
and ranges, the ratio, the issue's target (a warm call ≤ 20 ms through stdio), and, for the
record, the server's start (spawn to its tool list: an agent offers the tools once it answers).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import compile_server, loadavg, median, ms, print_table, row, spread  # noqa: E402

SID = "7d3c1b2a-4e5f-4a6b-9c8d-1e2f3a4b5c6e"
TARGET_S = 0.020
_GIT = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
        "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid",
        "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
CALLS = [("drift_since", {}), ("in_doubt_operations", {}), ("file_history", {"path": "f7.py"}),
         ("todos", {})]


def make_repo(root: Path, files: int = 50) -> None:
    """A committed repository of `files` small Python files, on a feature branch."""
    root.mkdir(parents=True)
    for n in range(files):
        (root / f"f{n}.py").write_text(f"value = {n}\n")
    env = {**os.environ, **_GIT}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "files"],
                 ["checkout", "-q", "-b", "feature/bench"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def make_journal(store: Path, repo: Path, events: int) -> None:
    """A Claude Code session's journal of about `events` records: shell calls (started and
    committed) and a file version every 20th call; the turn marker 200 records before the end."""
    from sessionkeeper.api import Keeper
    from sessionkeeper.hooks.state import note_turn
    from sessionkeeper.session.live import args_digest

    journal = Keeper(store).journal("claude", SID, workspace=str(repo))
    n = 0
    while n < events:
        batch: list[dict[str, object]] = []
        for _ in range(100):
            call, args = f"toolu_{n:06d}", {"command": f"python -m pytest -q -k case{n}"}
            batch += [{"type": "operation", "operation_id": call, "tool": "Bash", "status": "started",
                       "args_digest": args_digest(args), "args": args},
                      {"type": "operation", "operation_id": call, "tool": "Bash",
                       "status": "committed", "result_persisted": True, "result": {"exit": 0}}]
            n += 2
        journal.record_built(batch)  # type: ignore[arg-type]
        if n % 2000 == 0:
            for k in range(0, 50, 7):
                (repo / f"f{k}.py").write_text(f"value = {k}  # edit {n}\n")
                journal.record_file(f"f{k}.py")
        if events - n == 200:
            journal.flush()
            time.sleep(0.01)
            note_turn(store, "claude", SID)
            time.sleep(0.01)
    journal.record_built([{"type": "todo", "items": [{"id": "1", "text": "bench", "status": "pending"}]}])
    journal.close()


async def measure(store: Path, repo: Path, runs: int) -> list[tuple[str, str, str, float, bool | None]]:
    """(case, subject, baseline, ratio, met) rows."""
    from mcp import Client, StdioServerParameters

    from sessionkeeper.api import Keeper
    from sessionkeeper.mcp.target import Caller
    from sessionkeeper.mcp.tools import Tools

    script = Path(sys.executable).with_name("sessionkeeper")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "sessionkeeper"]
    env = {"HOME": os.environ.get("HOME", "/tmp"), "CLAUDE_CODE_SESSION_ID": SID, **_GIT,
           "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    params = StdioServerParameters(command=argv[0], args=[*argv[1:], "mcp", "--store", str(store)],
                                   cwd=str(repo), env=env)
    local = Tools(Keeper(store, read_only=True), Caller(workspace=str(repo)),
                  env={"CLAUDE_CODE_SESSION_ID": SID, **_GIT})
    rows: list[tuple[str, str, str, float, bool | None]] = []
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=120) as client:
        await client.list_tools()
        start_s = time.perf_counter() - started
        for name, args in CALLS:  # warm both sides: imports, the first full read
            await client.call_tool(name, args)
            getattr(local, name)(**args)
        journal = Keeper(store).journal("claude", SID)
        grown = 0

        def grow() -> None:  # the previous call's PostToolUse and this call's PreToolUse
            nonlocal grown
            tool = "mcp__sessionkeeper__drift_since"
            done = [{"type": "operation", "operation_id": f"toolu_mcp{grown}", "tool": tool,
                     "status": "committed", "result_persisted": False}] if grown else []
            grown += 1
            journal.record_built([*done, {"type": "operation", "operation_id": f"toolu_mcp{grown}",
                                          "tool": tool, "status": "started",
                                          "args_digest": "0" * 64}])  # type: ignore[list-item]
            journal.flush()

        for label, calls, before in (("journal unchanged", CALLS, None),
                                     ("one record appended before each call", CALLS[:2], grow)):
            for name, args in calls:
                remote: list[float] = []
                inproc: list[float] = []
                for r in range(runs):
                    for side in ((0, 1) if r % 2 == 0 else (1, 0)):
                        if before is not None:
                            before()
                        t0 = time.perf_counter()
                        if side == 0:
                            result = await client.call_tool(name, args)
                            assert not result.is_error, result.content
                            remote.append(time.perf_counter() - t0)
                        else:
                            getattr(local, name)(**args)
                            inproc.append(time.perf_counter() - t0)
                rows.append((f"{name}, {label} (stdio vs in-process)", spread(remote),
                             spread(inproc), median(remote) / median(inproc),
                             median(remote) <= TARGET_S))
        journal.close()
    rows.append(("server start: spawn to its tool list", ms(start_s), "-", start_s / 1.0, None))
    return rows


def main() -> int:
    """Build the journal, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    compile_server()
    with tempfile.TemporaryDirectory(prefix="sk-bench-mcp-") as tmp:
        repo, store = Path(tmp) / "repo", Path(tmp) / "store"
        make_repo(repo)
        t0 = time.perf_counter()
        make_journal(store, repo, args.events)
        print(f"MCP tool latency on a {args.events}-event journal (written in "
              f"{time.perf_counter() - t0:.1f} s); load {loadavg()}; {args.runs} runs per case\n")
        found = asyncio.run(measure(store, repo, args.runs))
    print_table([row(case, subject, baseline, ratio,
                     target="≤ 20 ms through stdio" if met is not None else "-", met=met)
                 for case, subject, baseline, ratio, met in found])
    print("\n(ratio: stdio / in-process; for the last row: the start / Codex's 1 s grace for "
          "optional MCP servers)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
