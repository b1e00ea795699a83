"""The editor's picker on a shared index: the language server given `initializationOptions.index`
lists the team's threads, filters them by machine, and shows one recorded elsewhere (fixtures:
`pg_url`, `repo`, `tmp_path`, tests/conftest.py; a real server, the handlers in-process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.lsp.app import dispatch
from sessionkeeper.lsp.options import parse_options
from sessionkeeper.lsp.server import SessionKeeperServer
from sessionkeeper.store.machine import ENV_MACHINE


async def test_the_picker_lists_the_teams_threads_and_filters_them_by_machine(
        pg_url: str, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: `pg_url`; a thread recorded by the laptop's store, the editor on another store."""
    monkeypatch.setenv(ENV_MACHINE, "laptop")
    session = Keeper(tmp_path / "laptop", shared_index=pg_url).start(repo, title="on the laptop")
    session.record({"type": "message", "role": "user", "text": "hello"})
    session.close()  # pushed
    monkeypatch.setenv(ENV_MACHINE, "desk")
    ls = SessionKeeperServer(store=str(tmp_path / "desk"))
    ls.workspace_root = str(repo)
    ls.options, problems = parse_options({"index": pg_url, "watch": False})
    assert problems == []
    ls.sent = []
    ls.protocol.notify = lambda method, params=None: ls.sent.append((method, params))
    try:
        listed = await dispatch(ls, "session/list", {"all_workspaces": True})
        assert [(t["thread_id"], t["machine"]) for t in listed["threads"]] == [
            (session.thread_id, "laptop")]
        mine = await dispatch(ls, "session/list", {"all_workspaces": True, "machine": "desk"})
        assert mine["threads"] == []
        shown = await dispatch(ls, "session/show", {"thread_id": session.thread_id})
        assert [s["session_id"] for s in shown["sessions"]] == [session.session_id]
    finally:
        ls.close_all()
