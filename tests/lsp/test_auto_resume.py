"""initializationOptions.autoResume: the latest thread resumes; on drift the user is asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import git
from ._client import stop_client


async def record_thread(spawn, workspace: Path) -> str:
    """Start a thread in `workspace` with one server, then shut that server down."""
    first = await spawn(workspace=workspace)
    started = await first.request("session/start", {"workspace": str(workspace),
                                                   "title": "recorded"})
    await first.request("session/record", {"session_id": started["session_id"], "events": [
        {"type": "message", "role": "user", "text": "hello"}]})
    await stop_client(first)  # releases the thread
    return started["thread_id"]


async def test_auto_resume_continues_the_latest_thread_when_nothing_changed(
        spawn, workspace: Path) -> None:
    """Fixtures: `spawn`, `workspace`."""
    thread = await record_thread(spawn, workspace)
    client = await spawn(workspace=workspace, options={"autoResume": True})
    status = await client.wait_status(lambda s: s is not None)
    assert status["thread_id"] == thread and status["title"] == "recorded"
    assert status["verdict"] == "ok" and status["drift"] is False
    assert client.asked == []


async def resume_after_branch_switch(spawn, workspace: Path, *, answer: str) -> tuple[str, Any]:
    """Record a thread, switch the branch, open a server that auto-resumes and answers `answer`.

    Returns (the recorded thread id, the client)."""
    thread = await record_thread(spawn, workspace)
    git(workspace, "checkout", "-q", "-b", "elsewhere")
    return thread, await spawn(workspace=workspace, options={"autoResume": True}, answer=answer)


async def test_auto_resume_on_drift_asks_and_forks_when_the_user_picks_fork(
        spawn, workspace: Path) -> None:
    """Fixtures: `spawn`, `workspace`."""
    thread, client = await resume_after_branch_switch(spawn, workspace, answer="Fork")
    status = await client.wait_status(lambda s: s is not None)
    assert status["thread_id"] != thread and status["branch"] == "elsewhere"
    assert len(client.asked) == 1
    question = client.asked[0]
    assert "branch: fix/payment → elsewhere" in question.message
    assert [a.title for a in question.actions] == ["Fork", "Switch back", "Continue", "Cancel"]


async def test_auto_resume_on_drift_continue_keeps_the_thread_and_flags_drift(
        spawn, workspace: Path) -> None:
    """Fixtures: `spawn`, `workspace`."""
    thread, client = await resume_after_branch_switch(spawn, workspace, answer="Continue")
    status = await client.wait_status(lambda s: s is not None)
    assert status["thread_id"] == thread
    assert status["verdict"] == "drift" and status["drift"] is True
