"""session/reindex rebuilds the index and reports work-done progress."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types


async def test_reindex_reports_progress_and_counts_threads(spawn, workspace: Path,
                                                           store: Path) -> None:
    """Fixtures: `spawn`, `workspace`, `store`."""
    client = await spawn(workspace=workspace, progress=True)
    for title in ("one", "two"):
        await client.request("session/start", {"workspace": str(workspace), "title": title})
    (store / "state.db").unlink()  # the index is a cache: gone, it is rebuilt from the rollouts

    result = await client.request("session/reindex", {})
    assert result == {"threads": 2, "sessions": 2, "damaged": 0}
    reports = [r for token, r in client.lsp.progress_reports.items()
               if str(token).startswith("sessionkeeper-reindex-")]
    assert len(reports) == 1
    kinds = [type(v) for v in reports[0]]
    assert kinds[0] is types.WorkDoneProgressBegin and kinds[-1] is types.WorkDoneProgressEnd
    assert types.WorkDoneProgressReport in kinds
    assert reports[0][0].cancellable is True
    listed = await client.request("session/list", {})
    assert sorted(t["title"] for t in listed["threads"]) == ["one", "two"]


async def test_reindex_without_progress_support_still_answers(spawn, workspace: Path) -> None:
    """Fixtures: `spawn`, `workspace`."""
    client = await spawn(workspace=workspace, progress=False)
    assert await client.request("session/reindex", {}) == {"threads": 0, "sessions": 0,
                                                           "damaged": 0}
    assert client.lsp.progress_reports == {}


async def test_a_clients_own_token_gets_the_progress_and_the_server_makes_none(
        spawn, workspace: Path) -> None:
    """Fixtures: `spawn`, `workspace`; a client that supports progress sends its own token (as the
    extension's one notification does): every $/progress goes to that token, none to a token the
    server would have created beside it."""
    client = await spawn(workspace=workspace, progress=True)
    await client.request("session/start", {"workspace": str(workspace), "title": "one"})
    client.lsp.progress_reports["the-editors-token"] = []  # a token the client made itself
    result = await client.request("session/reindex", {"workDoneToken": "the-editors-token"})
    assert result == {"threads": 1, "sessions": 1, "damaged": 0}
    assert list(client.lsp.progress_reports) == ["the-editors-token"]
    kinds = [type(v) for v in client.lsp.progress_reports["the-editors-token"]]
    assert kinds[0] is types.WorkDoneProgressBegin and kinds[-1] is types.WorkDoneProgressEnd
