"""Live drift over stdio: the real watcher sees a checkout, a commit and an edit, and the server
pushes the new state without being asked; a checkout is recorded as one git_moved, not as edits."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ..conftest import git
from ._client import TIMEOUT, Client
from .conftest import sha256

WATCH_READY_S = 1.0  # the watcher starts with the session; give inotify a moment
V2 = "def charge(amount):\n    return round(amount, 2)\n"


@pytest.fixture
def branched(workspace: Path) -> Path:
    """`workspace` with a commit on fix/payment that changes payment.py (main keeps the old one)."""
    (workspace / "payment.py").write_text(V2)
    (workspace / "notes.md").write_text("only on fix/payment\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "round charges")
    return workspace


async def timeline(client: Client, thread: str) -> list[dict[str, Any]]:
    """The thread's timeline entries."""
    return (await client.request("session/show", {"thread_id": thread}))["timeline"]


async def until(client: Client, thread: str, predicate: Any) -> list[dict[str, Any]]:
    """Poll session/show until its timeline satisfies `predicate` (bounded by TIMEOUT)."""
    async def poll() -> list[dict[str, Any]]:
        while not predicate(entries := await timeline(client, thread)):
            await asyncio.sleep(0.1)
        return entries
    return await asyncio.wait_for(poll(), TIMEOUT)


async def start_touching_payment(spawn: Any, workspace: Path) -> tuple[Client, dict[str, Any]]:
    """A server on `workspace`, a session that recorded the agent's payment.py and a test run."""
    client = await spawn(workspace=workspace)
    started = await client.request("session/start", {"workspace": str(workspace), "title": "pay"})
    await client.request("session/record", {"session_id": started["session_id"], "events": [
        {"type": "file_change", "path": "payment.py", "author": "agent",
         "after_hash": sha256(workspace / "payment.py")},
        {"type": "verifier", "kind": "tests", "passed": 3, "total": 4}]})
    status = await client.wait_status(lambda s: s and s["tests"] == {"passed": 3, "total": 4})
    assert status["state"] == "ok" and status["state_reason"] is None
    await asyncio.sleep(WATCH_READY_S)
    return client, started


async def test_branch_switch_turns_the_current_session_to_drift_and_is_recorded_as_a_checkout(
        spawn: Callable[..., Any], branched: Path) -> None:
    """Fixtures: `spawn` (server subprocess, real watcher), `branched` (fix/payment ahead of main)."""
    client, started = await start_touching_payment(spawn, branched)
    thread = started["thread_id"]
    seen = len(client.statuses)

    t0 = time.monotonic()
    git(branched, "checkout", "-q", "main")
    status = await client.wait_status(lambda s: s and s["state"] == "drift")
    latency = time.monotonic() - t0
    assert client.statuses.index(status) >= seen  # pushed, not asked for
    assert status["state_reason"] == "branch fix/payment → main · 1 file changed outside"
    assert status["changed_files"] == ["payment.py"]
    assert {d["kind"] for d in status["differences"]} == {"branch", "head", "file_changed"}
    print(f"drift pushed {latency:.2f} s after the checkout returned")

    entries = await until(client, thread, lambda es: any(e["type"] == "git_moved" for e in es))
    moved = [e for e in entries if e["type"] == "git_moved"]
    assert [e["summary"] for e in moved] == [
        "checkout fix/payment → main (2 files, 1 touched by the session)"]
    assert not [e for e in entries if e["type"] == "file_change" and e["summary"] != (
        "payment.py by agent")], "the checkout was recorded as edits"

    listed = (await client.request("session/list", {}))["threads"]
    assert listed[0]["current"] is True and listed[0]["state"] == "drift"
    assert listed[0]["state_reason"] == status["state_reason"]

    git(branched, "checkout", "-q", "fix/payment")  # switching back ends the drift
    status = await client.wait_status(lambda s: s and s is client.statuses[-1] and s["state"] == "ok")
    assert status["changed_files"] == [] and status["state_reason"] is None
    entries = await until(client, thread,
                          lambda es: sum(e["type"] == "git_moved" for e in es) == 2)
    assert [e["summary"] for e in entries if e["type"] == "file_change"] == ["payment.py by agent"]


async def test_a_commit_is_a_new_head_and_a_user_edit_makes_the_tests_stale(
        spawn: Callable[..., Any], branched: Path) -> None:
    """Fixtures: `spawn`, `branched`."""
    client, started = await start_touching_payment(spawn, branched)

    (branched / "payment.py").write_text(V2 + "# by hand\n")
    status = await client.wait_status(
        lambda s: s and any(i["subsystem"] == "verifier" for i in s["invalidated"]))
    assert status["state"] == "ok", status["differences"]  # the user's edit was recorded
    entries = await timeline(client, started["thread_id"])
    assert entries[-1]["summary"] == "payment.py by user"

    git(branched, "commit", "-qam", "hand edit")
    status = await client.wait_status(lambda s: s and s["state"] == "drift")
    head = git(branched, "rev-parse", "HEAD")
    assert status["state_reason"].startswith("HEAD ") and status["state_reason"].endswith(head[:7])
    entries = await until(client, started["thread_id"],
                          lambda es: any(e["type"] == "git_moved" for e in es))
    assert entries[-1]["summary"].startswith("HEAD ") and "file" not in entries[-1]["summary"]


async def test_in_a_linked_worktree_the_branch_switch_is_seen_too(
        spawn: Callable[..., Any], branched: Path, tmp_path: Path) -> None:
    """Fixtures: `spawn`, `branched`; a linked worktree of it on a new branch (its HEAD lives in
    the main repository's .git/worktrees/, outside the watched folder)."""
    linked = tmp_path / "linked"
    git(branched, "worktree", "add", "-q", "-b", "side", str(linked))
    client, started = await start_touching_payment(spawn, linked)
    git(linked, "checkout", "-q", "-b", "side-2")
    status = await client.wait_status(lambda s: s and s["state"] == "drift")
    assert status["state_reason"] == "branch side → side-2"
    entries = await until(client, started["thread_id"],
                          lambda es: any(e["type"] == "git_moved" for e in es))
    assert entries[-1]["summary"] == "checkout side → side-2"
