"""Hook latency, process start to exit (what the agent waits for), on a 20,000-file repository, side
by side with the floor (`python -c pass`), `git status --porcelain` there, and the raw work of a
capture (a Python that hashes, zstd-compresses and fsyncs the 100 KB file an Edit wrote).

Run as a script (pytest does not collect bench_*.py):

    PYTHONPATH=server python tests/benchmarks/bench_hooks.py [--files 20000] [--runs 15]

The session is started by the real start hook and has three files edited through Edit hooks;
then every round runs, in turn: the floor, git status, the raw capture, the resume hook (the
digest proves ok: the path every in-place resume takes, after the background catch-up folded the
spool — run here in-process, untimed), the resume hook with the digest removed (the full check,
which folds the spool and writes the resume), the Pre- and PostToolUse hooks of an Edit of a
100 KB file (the thin hook: spooled, the file's content kept as a raw blob; each hook as `hooks
install` writes it, `python -S .../sessionkeeper/__main__.py`, and the PreToolUse once more
through the console script), the PostToolUse of a
Bash call (the changed files are listed and read), and the SessionStart of a new session (its
journal starts). Rounds alternate so machine noise hits all alike. Targets (issue 26): PreToolUse
<= 2x the floor, PostToolUse of the Edit <= 2.5x the raw capture, resume <= 1.2x git status.
Children run with bytecode caching on (`_bench.child_env`), as an installed package has it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from sessionkeeper.hooks.entries import thin_program  # noqa: E402
from tests.benchmarks._bench import child_env  # noqa: E402

SK = str(Path(sys.executable).parent / "sessionkeeper")
HOOK = thin_program()
"""What `hooks install` puts in the agents' config: this interpreter, -S, our __main__.py."""
SID = "7d3c1b2a-4e5f-4a6b-9c8d-1e2f3a4b5c6d"
_GIT = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
        "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}


def make_repo(root: Path, files: int) -> None:
    """A committed repository of `files` small files in 100 directories of 10 subdirectories."""
    for n in range(files):
        directory = root / f"d{n % 100:02d}" / f"s{(n // 100) % 10}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"f{n}.txt").write_text(f"file {n}\n" * 4)
    env = {**os.environ, **_GIT}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "files"],
                 ["checkout", "-q", "-b", "feature/bench"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def hook(event: str, data: dict[str, object], store: Path) -> subprocess.CompletedProcess[bytes]:
    """One real hook call (the command the agents run)."""
    return subprocess.run([*HOOK, "hook", "--store", str(store), "claude", event],
                          input=json.dumps(data).encode(), capture_output=True, check=True,
                          env=ENV)


def prepare(repo: Path, store: Path) -> bytes:
    """Start the session through the hooks, edit three files through Edit hooks; the resume stdin."""
    base = {"session_id": SID, "cwd": str(repo), "transcript_path": "/nowhere.jsonl"}
    hook("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}, store)
    for n in range(3):
        path = repo / "d00" / "s0" / f"f{n * 100}.txt"
        call = {**base, "tool_name": "Edit", "tool_input": {"file_path": str(path)},
                "tool_use_id": f"toolu_{n}", "tool_response": {}}
        hook("PreToolUse", {**call, "hook_event_name": "PreToolUse"}, store)
        path.write_text(f"edited {n}\n")
        hook("PostToolUse", {**call, "hook_event_name": "PostToolUse"}, store)
    subprocess.run(["git", "commit", "-qam", "edits"], cwd=repo, env={**os.environ, **_GIT},
                   check=True, capture_output=True)
    hook("PostToolUse", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                         "tool_input": {"command": "git commit"}, "tool_use_id": "toolu_c",
                         "tool_response": ""}, store)  # the commit moves the baseline
    return json.dumps({**base, "hook_event_name": "SessionStart", "source": "resume"}).encode()


def tool_call(repo: Path, event: str, number: int, *, tool: str = "Edit") -> bytes:
    """The stdin of round `number`'s Edit (or Bash) call (its own tool_use_id)."""
    tool_input = ({"file_path": str(repo / "d00" / "s0" / "f0.txt")} if tool == "Edit"
                  else {"command": "make test"})
    return json.dumps({"session_id": SID, "cwd": str(repo), "transcript_path": "/nowhere.jsonl",
                       "hook_event_name": event, "tool_name": tool, "tool_response": {},
                       "tool_input": tool_input,
                       "tool_use_id": f"toolu_bench{tool}{number}"}).encode()


def new_session(repo: Path, number: int) -> bytes:
    """The stdin of round `number`'s SessionStart of a new session (startup: its journal starts)."""
    return json.dumps({"session_id": f"{number:08x}-4e5f-4a6b-9c8d-1e2f3a4b5c6d", "cwd": str(repo),
                       "transcript_path": "/nowhere.jsonl", "hook_event_name": "SessionStart",
                       "source": "startup"}).encode()


ENV = child_env(SESSIONKEEPER_CATCH_UP="0")  # the catch-up is run here, between rounds
RAW_CAPTURE = """
import hashlib, os, sys, zstandard
data = open(sys.argv[1], "rb").read()
key = hashlib.sha256(data).hexdigest()
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.write(fd, zstandard.ZstdCompressor(level=3).compress(data))
os.fsync(fd)
os.close(fd)
"""
"""The floor of a PostToolUse that keeps a file's content: read, sha256, zstd, write, fsync."""


def timed(args: list[str], *, cwd: Path, stdin: bytes | None = None) -> tuple[float, bytes]:
    """Seconds from spawn to exit, and stdout."""
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, check=True, env=ENV)
    return time.perf_counter() - started, done.stdout


def folded(store: Path) -> None:
    """What the background catch-up does after a burst of calls: fold, leave a fresh digest."""
    from sessionkeeper.hooks import catch_up

    catch_up.QUIET_S = 0.0
    catch_up.run(str(store), "claude", SID)


def _sizes(root: Path) -> list[int]:
    """The sizes of the journals' rollouts and spools."""
    return sorted(p.stat().st_size for p in root.rglob("*") if p.suffix in (".jsonl", ".spool"))


def main() -> int:
    """Build the repository, run the rounds, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=15)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as tmp:
        repo, store = Path(tmp) / "repo", Path(tmp) / "store"
        repo.mkdir()
        started = time.perf_counter()
        make_repo(repo, opts.files)
        print(f"repository: {opts.files} files, built in {time.perf_counter() - started:.1f} s")
        resume = prepare(repo, store)
        digest = store / "hooks" / "digests" / f"claude-{SID}.json"
        journals = store / "journals" / "claude"
        edited = repo / "d00" / "s0" / "f0.txt"
        cases = {
            "python -c pass (floor)": ([sys.executable, "-c", "pass"], None),
            "python -S -c pass": ([sys.executable, "-S", "-c", "pass"], None),
            "git status --porcelain": (["git", "status", "--porcelain"], None),
            "raw capture of 100 KB": ([sys.executable, "-c", RAW_CAPTURE, str(edited),
                                       str(Path(tmp) / "raw.zst")], None),
            "hook SessionStart resume": ([*HOOK, "hook", "--store", str(store), "claude",
                                          "SessionStart"], resume),
            "  same, full check (no digest)": ([*HOOK, "hook", "--store", str(store), "claude",
                                                "SessionStart"], resume),
            "hook PreToolUse (an Edit)": ([*HOOK, "hook", "--store", str(store), "claude",
                                           "PreToolUse"], None),
            "  same, as the console script": ([SK, "hook", "--store", str(store), "claude",
                                              "PreToolUse"], None),
            "hook PostToolUse (the Edit)": ([*HOOK, "hook", "--store", str(store), "claude",
                                             "PostToolUse"], None),
            "hook PostToolUse (a Bash call)": ([*HOOK, "hook", "--store", str(store), "claude",
                                                "PostToolUse"], None),
            "hook SessionStart (a new session)": ([*HOOK, "hook", "--store", str(store), "claude",
                                                   "SessionStart"], None),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for round_ in range(opts.runs + 1):  # round 0 warms the page cache and git's index
            for name, (args, stdin) in cases.items():
                full = name.startswith("  same")
                if name == "hook SessionStart resume":
                    folded(store)  # the calls of the last round, folded in the background
                if full:
                    digest.unlink()  # the full check leaves a fresh one behind
                before = _sizes(journals)
                if "ToolUse" in name or "console" in name:  # a new call each round (a repeated id
                    event = "PreToolUse" if "console" in name else name.split()[1]  # is a re-delivery)
                    stdin = tool_call(repo, event, round_ + 1000 * ("console" in name),
                                      tool="Bash" if "Bash" in name else "Edit")
                    if "PostToolUse (the Edit)" in name:
                        edited.write_bytes(os.urandom(50_000).hex().encode())  # 100 KB, new
                elif "new session" in name:
                    stdin = new_session(repo, round_)
                elapsed, out = timed(args, cwd=repo, stdin=stdin)
                if "ToolUse" in name or "console" in name or "new session" in name:
                    assert _sizes(journals) != before, out  # the call was spooled (or recorded)
                elif stdin is not None:
                    assert b"nothing changed since it last ran" in out, (name, out.decode())
                    assert (_sizes(journals) != before) is full  # the fast check writes nothing
                if round_:
                    times[name].append(elapsed)
        print(f"{'case':34} {'median':>9} {'best':>9}")
        for name, values in times.items():
            print(f"{name:34} {statistics.median(values) * 1000:8.1f}ms {min(values) * 1000:8.1f}ms")
        med = {name: statistics.median(values) for name, values in times.items()}
        floor = med["python -c pass (floor)"]
        pre = med["hook PreToolUse (an Edit)"] / floor
        post = med["hook PostToolUse (the Edit)"] / med["raw capture of 100 KB"]
        ratio = med["hook SessionStart resume"] / med["git status --porcelain"]
        print(f"PreToolUse (Edit) / python start: {pre:.2f}x (target <= 2x: "
              f"{'met' if pre <= 2 else 'MISSED'})")
        print(f"PostToolUse (Edit of 100 KB) / raw capture: {post:.2f}x (target <= 2.5x: "
              f"{'met' if post <= 2.5 else 'MISSED'})")
        print(f"resume hook / git status: {ratio:.2f}x (target <= 1.2x: "
              f"{'met' if ratio <= 1.2 else 'MISSED'}); resume hook / python start: "
              f"{med['hook SessionStart resume'] / floor:.2f}x; full check / git status: "
              f"{med['  same, full check (no digest)'] / med['git status --porcelain']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
