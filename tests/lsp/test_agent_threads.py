"""Codex and Claude Code threads in the language server: listed with their agent, resumed through
the agent's own command, never made current; the agents' homes are never written."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.conftest import git, init_repo
from tests.unit._agents import claude_home, codex_home, generator, tree_digest

GEN = generator()
CODEX, CLAUDE = GEN.CODEX_THREAD, GEN.CLAUDE_SESSION


def _homes(tmp_path: Path, workspace: Path) -> tuple[Path, Path, dict[str, Any]]:
    codex = codex_home(workspace, tmp_path / "codexhome")
    claude = claude_home(workspace, tmp_path / "claudecfg")
    return codex, claude, {"codexHome": str(codex), "claudeHome": str(claude)}


async def test_listed_threads_carry_their_agent_and_the_homes_stay_unchanged(
        spawn: Any, workspace: Path, tmp_path: Path) -> None:
    """Fixtures: `spawn`, `workspace` (fix/payment) with a Codex and a Claude session in it."""
    codex, claude, options = _homes(tmp_path, workspace)
    before = tree_digest(codex), tree_digest(claude)
    client = await spawn(workspace=workspace, options=options)
    await client.request("session/start", {"title": "ours"})
    listed = await client.request("session/list", {})
    agents = {t["agent"]: t for t in listed["threads"]}
    assert set(agents) == {"native", "codex", "claude"}
    assert agents["codex"]["thread_id"] == CODEX and agents["claude"]["branch"] == "fix/payment"
    assert agents["codex"]["state"] == "ok" and agents["claude"]["cwd"] == str(workspace)
    only = await client.request("session/list", {"agent": "claude"})
    assert [t["thread_id"] for t in only["threads"]] == [CLAUDE]
    shown = await client.request("session/show", {"thread_id": CODEX})
    assert shown["thread"]["agent"] == "codex" and len(shown["sessions"]) == 1
    assert agents["codex"]["baseline"] == shown["thread"]["baseline"] == "log"  # no hook ran
    ours = next(t for t in listed["threads"] if t["agent"] == "native")
    own = await client.request("session/show", {"thread_id": ours["thread_id"]})
    assert own["thread"]["baseline"] is None
    assert (tree_digest(codex), tree_digest(claude)) == before


async def test_agents_can_be_turned_off_or_pointed_elsewhere(spawn: Any, workspace: Path,
                                                            tmp_path: Path) -> None:
    """Fixtures: `spawn`, `workspace`; one server with agents [], one reading only codex."""
    _, _, options = _homes(tmp_path, workspace)
    off = await spawn(workspace=workspace, options={**options, "agents": []})
    assert (await off.request("session/list", {}))["threads"] == []
    codex_only = await spawn(workspace=workspace, options={**options, "agents": ["codex"]})
    listed = await codex_only.request("session/list", {})
    assert [t["agent"] for t in listed["threads"]] == ["codex"]


async def test_resume_of_an_agent_thread_answers_its_command_and_never_makes_it_current(
        spawn: Any, workspace: Path, tmp_path: Path) -> None:
    """Fixtures: `spawn`, `workspace`; resumed in place, after a checkout (the user is asked and
    answers Continue), and in another repository."""
    codex, claude, options = _homes(tmp_path, workspace)
    before = tree_digest(codex), tree_digest(claude)
    client = await spawn(workspace=workspace, options=options, answer="Continue")
    ok = await client.request("session/resume", {"thread_id": CLAUDE})
    assert ok["report"]["verdict"] == "ok" and ok["session_id"] is None
    assert ok["command"] == {"argv": ["claude", "--resume", CLAUDE], "cwd": str(workspace),
                             "display": f"claude --resume {CLAUDE}"}
    assert await client.request("session/current", {}) is None
    git(workspace, "checkout", "-q", "-b", "hotfix")
    drift = await client.request("session/resume", {"thread_id": CODEX})
    assert len(client.asked) == 1 and "hotfix" in client.asked[0].message
    assert drift["report"]["verdict"] == "drift" and drift["report"]["decision"] == "continue"
    assert drift["command"]["argv"] == ["codex", "resume", CODEX]
    other = init_repo(tmp_path / "other", {"x": "1\n"})
    blocked = await client.request("session/resume", {"thread_id": CODEX,
                                                      "workspace": str(other),
                                                      "decision": "continue"})
    assert blocked["report"]["verdict"] == "blocked" and blocked["command"] is None
    assert await client.request("session/current", {}) is None
    assert [s for s in client.statuses if s is not None] == []
    assert (tree_digest(codex), tree_digest(claude)) == before


async def test_a_large_first_import_reports_progress_then_a_new_session_shows_up(
        spawn: Any, workspace: Path, tmp_path: Path) -> None:
    """Fixtures: `spawn`, `workspace`; 60 Codex threads, then one more written after the first
    listing (the watcher on the roots makes the next listings see it)."""
    codex = tmp_path / "codexhome"
    for n in range(60):
        codex_home(workspace, codex, thread=f"019a7c00-1111-7222-8333-{n:012d}")
    client = await spawn(workspace=workspace, options={"codexHome": str(codex), "agents": ["codex"]})
    listed = await client.request("session/list", {"limit": 100})
    assert len(listed["threads"]) == 60
    reports = [r for token, r in client.lsp.progress_reports.items()
               if str(token).startswith("sessionkeeper-agents-")]
    assert len(reports) == 1
    kinds = [type(v) for v in reports[0]]
    assert kinds[0] is types.WorkDoneProgressBegin and kinds[-1] is types.WorkDoneProgressEnd
    assert "60/60" in (reports[0][-2].message or "")
    codex_home(workspace, codex, thread=CODEX)
    for _ in range(100):
        listed = await client.request("session/list", {"limit": 100})
        if len(listed["threads"]) == 61:
            break
        await asyncio.sleep(0.1)
    assert CODEX in {t["thread_id"] for t in listed["threads"]}
    assert len([t for t in client.lsp.progress_reports
                if str(t).startswith("sessionkeeper-agents-")]) == 1  # one file: no progress
