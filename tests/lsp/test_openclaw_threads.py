"""OpenClaw threads in the language server: listed with their agent, checked, resumed through
OpenClaw's own command, never made current; the state dir is never written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import git
from tests.unit import _openclaw as oc
from tests.unit._agents import tree_digest


async def test_an_openclaw_thread_is_listed_checked_and_resumed_by_openclaws_command(
        spawn: Any, workspace: Path, tmp_path: Path) -> None:
    """Fixtures: `spawn`, `workspace` (fix/payment) and an OpenClaw state dir whose store holds
    the real run's session, its cwd rewritten to the workspace."""
    state = tmp_path / "openclaw"
    oc.build(state, cwd=str(workspace))
    before = tree_digest(state)
    client = await spawn(workspace=workspace, options={"openclawHome": str(state),
                                                       "agents": ["openclaw"]},
                         answer="Continue")
    listed = await client.request("session/list", {})
    [row] = listed["threads"]
    assert (row["agent"], row["thread_id"], row["branch"]) == ("openclaw", oc.SESSION, "fix/payment")
    ok = await client.request("session/resume", {"thread_id": oc.SESSION})
    assert ok["report"]["verdict"] == "ok" and ok["session_id"] is None
    assert ok["command"]["argv"] == ["openclaw", "agent", "--local", "--agent", "main",
                                     "--session-id", oc.SESSION, "--message-file", "/dev/stdin"]
    assert await client.request("session/current", {}) is None
    git(workspace, "checkout", "-q", "-b", "hotfix")
    drift = await client.request("session/resume", {"thread_id": oc.SESSION})
    assert drift["report"]["verdict"] == "drift" and "hotfix" in client.asked[0].message
    assert tree_digest(state) == before
