"""The fast tier: handlers called in-process on a real store and a real git repo (no transport)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from sessionkeeper.lsp import convert
from sessionkeeper.lsp.app import dispatch
from sessionkeeper.lsp.options import ServerOptions
from sessionkeeper.lsp.rpc import InvalidParams
from sessionkeeper.lsp.server import DID_CHANGE, DID_CHANGE_THREADS, SessionKeeperServer
from sessionkeeper.lsp.watch import Change, file_change_events, hash_changes
from sessionkeeper.recovery.summary import ThreadSummary


@pytest.fixture
def server(store_dir: Path, repo: Path) -> Iterator[SessionKeeperServer]:
    """A server object on `store_dir` with `repo` as its workspace; notifications captured."""
    ls = SessionKeeperServer(store=str(store_dir))
    ls.workspace_root = str(repo)
    ls.options = ServerOptions(watch=False)
    ls.sent = []
    ls.protocol.notify = lambda method, params=None: ls.sent.append((method, params))
    yield ls
    ls.close_all()


def statuses(server: SessionKeeperServer) -> list[Any]:
    """The session/didChange params the server sent, in order."""
    return [params for method, params in server.sent if method == DID_CHANGE]


async def test_start_record_list_show_in_process(server: SessionKeeperServer, repo: Path) -> None:
    """Fixtures: `server` (in-process, on `store_dir`), `repo` (git repo on fix/payment)."""
    started = await dispatch(server, "session/start", {"title": "in process"})
    assert statuses(server)[-1] == await dispatch(server, "session/current", {})
    assert server.sent[-1] == (DID_CHANGE_THREADS, {"reason": "started"})
    acks = await dispatch(server, "session/record", {"session_id": started["session_id"], "events": [
        {"type": "todo", "items": [{"id": "a", "text": "t", "status": "done"}]}]})
    assert acks["acks"][0]["duplicate"] is False
    assert statuses(server)[-1]["todos"] == {"done": 1, "total": 1}
    listed = await dispatch(server, "session/list", {})
    assert listed["threads"][0]["state"] == "ok" and listed["threads"][0]["todos"] == {
        "done": 1, "total": 1}
    shown = await dispatch(server, "session/show", {"thread_id": started["thread_id"]})
    assert [e["type"] for e in shown["timeline"]] == ["session_meta", "lifecycle", "todo"]
    assert shown["sessions"][0]["session_id"] == started["session_id"]


async def test_record_without_change_of_status_sends_no_notification(
        server: SessionKeeperServer) -> None:
    """Fixture: `server`."""
    started = await dispatch(server, "session/start", {})
    before = len(server.sent)
    await dispatch(server, "session/record", {"session_id": started["session_id"], "events": [
        {"type": "message", "role": "user", "text": "hi"}]})
    assert len(server.sent) == before


async def test_list_pages_with_an_opaque_cursor(server: SessionKeeperServer) -> None:
    """Fixture: `server`."""
    threads = [(await dispatch(server, "session/start", {}))["thread_id"] for _ in range(3)]
    first = await dispatch(server, "session/list", {"limit": 2})
    assert first["next_cursor"] is not None
    second = await dispatch(server, "session/list", {"limit": 2, "cursor": first["next_cursor"]})
    seen = [t["thread_id"] for t in first["threads"] + second["threads"]]
    assert sorted(seen) == sorted(threads) and second["next_cursor"] is None


async def test_list_announces_no_next_page_when_the_page_holds_the_last_thread(
        server: SessionKeeperServer) -> None:
    """Fixture: `server` (two threads, pages of two: the first page is the last)."""
    threads = [(await dispatch(server, "session/start", {}))["thread_id"] for _ in range(2)]
    page = await dispatch(server, "session/list", {"limit": 2})
    assert sorted(t["thread_id"] for t in page["threads"]) == sorted(threads)
    assert page["next_cursor"] is None


async def test_archive_of_the_current_thread_closes_it_and_all_lists_it(
        server: SessionKeeperServer) -> None:
    """Fixture: `server`."""
    started = await dispatch(server, "session/start", {})
    assert await dispatch(server, "session/archive", {"thread_id": started["thread_id"]}) == {
        "thread_id": started["thread_id"], "archived": True}
    assert statuses(server)[-1] is None
    assert server.sent[-1] == (DID_CHANGE_THREADS, {"reason": "archived"})
    assert (await dispatch(server, "session/list", {}))["threads"] == []
    archived = (await dispatch(server, "session/list", {"all": True}))["threads"]
    assert archived[0]["archived"] is True
    await dispatch(server, "session/unarchive", {"thread_id": started["thread_id"]})
    assert len((await dispatch(server, "session/list", {}))["threads"]) == 1


async def test_clear_and_compact_return_seqs_and_resume_of_own_thread_reopens_it(
        server: SessionKeeperServer, repo: Path) -> None:
    """Fixtures: `server`, `repo`."""
    started = await dispatch(server, "session/start", {})
    cleared = await dispatch(server, "session/clear", {"session_id": started["session_id"],
                                                       "reason": "new task"})
    compacted = await dispatch(server, "session/compact", {"session_id": started["session_id"],
                                                           "summary": "so far"})
    assert compacted["seq"] > cleared["seq"]
    resumed = await dispatch(server, "session/resume", {"thread_id": started["thread_id"],
                                                        "workspace": str(repo)})
    assert resumed["thread_id"] == started["thread_id"]
    assert resumed["session_id"] not in (None, started["session_id"])
    assert statuses(server)[-1]["verdict"] == "ok"


@pytest.mark.parametrize(("raw", "code"), [
    ({"thread_id": "nope"}, -32010), ({}, -32602), ("text", -32602),
    ({"thread_id": "0" * 8 + "-0000-4000-8000-" + "0" * 12}, -32011)])
async def test_show_errors_carry_protocol_codes(server: SessionKeeperServer, raw: Any,
                                                code: int) -> None:
    """Fixture: `server`."""
    with pytest.raises(JsonRpcException) as info:
        await dispatch(server, "session/show", raw)
    assert info.value.code == code and info.value.data["error"]


def test_agent_edits_are_not_recorded_again_and_unknown_deletions_are_skipped() -> None:
    """No fixture: pure attribution rules of the watcher."""
    history = {"a.py": {"seq": 4, "hash": "h1", "author": "agent"},
               "b.py": {"seq": 5, "hash": "h2", "author": "agent"}}
    changes = [Change("a.py", "h1", False), Change("b.py", "h3", False),
               Change("c.py", None, True), Change("d.py", "h4", False),
               Change("b.py", None, True)]
    events = file_change_events(changes, last=history.get,
                                author_of=lambda c: "external" if c.deleted else "user")
    assert events == [  # b.py is touched: read (and kept) at record time; d.py: hash only
        {"type": "file_change", "path": "b.py", "author": "user", "before_hash": "h2"},
        {"type": "file_change", "path": "d.py", "author": "user", "after_hash": "h4"},
        {"type": "file_change", "path": "b.py", "author": "external", "before_hash": "h2",
         "deleted": True},
    ]


def test_hash_changes_skips_directories_and_paths_outside_the_root(tmp_path: Path) -> None:
    """No fixture beyond `tmp_path`."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.txt").write_text("x")
    changes = hash_changes(str(tmp_path), [(str(tmp_path / "sub"), False),
                                           (str(tmp_path / "sub" / "f.txt"), False),
                                           (str(tmp_path / "gone.txt"), True),
                                           ("/etc/hostname", False)])
    assert changes == [Change("sub/f.txt", hashlib.sha256(b"x").hexdigest(), False),
                       Change("gone.txt", None, True)]


async def test_watched_changes_recorded_through_the_domain_worker(
        server: SessionKeeperServer, repo: Path) -> None:
    """Fixtures: `server`, `repo`."""
    started = await dispatch(server, "session/start", {})

    class FakeWatcher:
        root = server.session.writer.meta["cwd"]

    server.watcher = FakeWatcher()
    (repo / "payment.py").write_text("changed by hand\n")
    changes = hash_changes(FakeWatcher.root, [(str(repo / "payment.py"), False)])
    assert await server.run(server.record_changes, changes) == 1
    assert await server.run(server.record_changes, changes) == 0  # same content: not again
    server.watcher = None
    shown = await dispatch(server, "session/show", {"thread_id": started["thread_id"]})
    assert shown["timeline"][-1]["summary"] == "payment.py by user"
    assert (shown["timeline"][-1]["path"], shown["timeline"][-1]["author"]) == ("payment.py", "user")
    assert shown["timeline"][0]["path"] is None  # only file changes name a file


def test_cursor_round_trips_and_rejects_foreign_text() -> None:
    """No fixture."""
    row = ThreadSummary(last_activity="2026-01-01T00:00:00.000Z",
                        thread_id="0" * 8 + "-0000-4000-8000-" + "0" * 12)
    assert convert.decode_cursor(convert.encode_cursor(row)) == (row.last_activity, row.thread_id)
    with pytest.raises(InvalidParams):
        convert.decode_cursor("%%%")


async def test_cancelled_reindex_answers_request_cancelled_and_keeps_the_index(
        server: SessionKeeperServer) -> None:
    """Fixture: `server` (its progress notifications land in `server.sent`)."""
    from concurrent.futures import Future

    started = await dispatch(server, "session/start", {})
    cancelled: Future = Future()
    cancelled.cancel()
    server.work_done_progress.tokens["client-token"] = cancelled  # as $/cancel would leave it
    with pytest.raises(JsonRpcException) as info:
        await dispatch(server, "session/reindex", {"workDoneToken": "client-token"})
    assert info.value.code == -32800
    values = [params.value for method, params in server.sent if method == "$/progress"]
    assert values[0].kind == "begin" and values[-1].kind == "end"
    assert values[-1].message == "cancelled"
    listed = await dispatch(server, "session/list", {})
    assert [t["thread_id"] for t in listed["threads"]] == [started["thread_id"]]


async def test_list_of_all_workspaces_includes_threads_of_other_folders(
        server: SessionKeeperServer, repo: Path, tmp_path: Path) -> None:
    """Fixtures: `server` (workspace `repo`), and a second folder with a thread of its own."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    here = await dispatch(server, "session/start", {"title": "here"})
    there = await dispatch(server, "session/start", {"title": "there", "workspace": str(other)})
    mine = (await dispatch(server, "session/list", {}))["threads"]
    assert [t["thread_id"] for t in mine] == [here["thread_id"]]
    every = (await dispatch(server, "session/list", {"all_workspaces": True}))["threads"]
    assert [t["thread_id"] for t in every] == [there["thread_id"], here["thread_id"]]
    assert every[0]["cwd"] == str(other.resolve()) and every[0]["current"] is True
