"""The demo's scripted agent: records a session through the public API, then hangs in a tool call.

Run as a child process (`python -m sessionkeeper.demo.agent STORE REPO`) so that it can be killed
with SIGKILL mid-operation. Prints one JSON line per step, after the step is recorded.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import orjson

from ..api import Keeper
from ..events import Durability
from ..session.live import Session
from .project import PAYMENT_FIXED, REGRESSION


def say(**fields: object) -> None:
    """Report a step to the parent."""
    sys.stdout.write(orjson.dumps(fields).decode() + "\n")
    sys.stdout.flush()


def sha(path: Path) -> str:
    """sha256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_tests(repo: Path) -> tuple[int, int]:
    """Run the project's unittest suite for real; (passed, total)."""
    out = subprocess.run([sys.executable, "-m", "unittest", "-q"], cwd=repo,
                         capture_output=True, text=True).stderr
    ran = re.search(r"Ran (\d+) test", out)
    if ran is None:
        raise RuntimeError(f"unittest printed no summary: {out[-300:]!r}")
    total = int(ran.group(1))
    failed = sum(int(n) for n in re.findall(r"(?:failures|errors)=(\d+)", out))
    return total - failed, total


def edit(session: Session, repo: Path, name: str, text: str) -> None:
    """Write a file as the agent and record the change."""
    path = repo / name
    before = sha(path)
    path.write_text(text)
    session.record({"type": "file_change", "path": name, "before_hash": before,
                    "after_hash": sha(path), "author": "agent"})


def main(store: str, repo_arg: str) -> None:
    """The scripted session."""
    repo = Path(repo_arg)
    session = Keeper(store).start(
        repo, title="fix payment rounding", model="gpt-5",
        permissions={"approval_mode": "on-request", "sandbox_policy": "workspace-write",
                     "tool_profile": "coding"})
    say(step="started", thread_id=session.thread_id, session_id=session.session_id,
        path=session.path, pid=os.getpid())
    session.record({"type": "message", "role": "user",
                    "text": "to_cents(0.29) returns 28 - fix the rounding and add a test"})
    session.record({"type": "todo", "items": [
        {"id": "1", "text": "reproduce the bug", "status": "done"},
        {"id": "2", "text": "fix to_cents rounding", "status": "in_progress"},
        {"id": "3", "text": "fix split remainder", "status": "pending"}]})
    session.record({"type": "cost", "model": "gpt-5", "input_tokens": 5200,
                    "output_tokens": 310, "usd": 0.0187})
    edit(session, repo, "payment.py", PAYMENT_FIXED)
    edit(session, repo, "test_payment.py", (repo / "test_payment.py").read_text() + REGRESSION)
    say(step="edited", files=["payment.py", "test_payment.py"])
    passed, total = run_tests(repo)
    session.record({"type": "verifier", "kind": "tests", "passed": passed, "total": total,
                    "checkpoint": f"tests: {passed}/{total}",
                    "command": "python -m unittest"}, durability=Durability.DURABLE)
    session.record({"type": "cost", "model": "gpt-5", "input_tokens": 7400,
                    "output_tokens": 520, "usd": 0.0263})
    say(step="tested", passed=passed, total=total)
    ticket = session.begin_operation(
        "op-deploy-staging", "shell",
        {"cmd": "./deploy.sh staging", "env": {"DEPLOY_TOKEN": "ghp_" + "x" * 36}})
    say(step="operation_started", operation_id=ticket.operation_id, seq=ticket.seq)
    time.sleep(600)  # the deploy "runs"; the parent kills us here


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
