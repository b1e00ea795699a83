"""Reads by the Keeper that holds a live session see everything that session acknowledged."""

from __future__ import annotations

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import InvalidEvent, InvalidWorkspace
from sessionkeeper.store.store import Store


def test_buffered_none_records_are_seen_by_check_fork_and_list(store_dir, repo):
    """Fixture: a live session with durability `none`; todo and tests recorded, still buffered."""
    keeper = Keeper(store_dir, durability="none")
    session = keeper.start(repo, title="buffered")
    session.record({"type": "todo", "items": [{"id": "1", "text": "t", "status": "done"}]})
    session.record({"type": "verifier", "kind": "tests", "passed": 7, "total": 9})
    report = keeper.check_resume(session.thread_id, workspace=str(repo))
    state = {name: sub.summary for name, sub in report.subsystems.items()}
    assert state["todos"]["done"] == 1 and state["verifier"]["tests"]["passed"] == 7
    fork = keeper.fork(session.thread_id)
    assert fork.summary()["tests"] == {"passed": 7, "total": 9}
    fork.close()
    listed = {t.title: t.event_count for t in keeper.rows()}
    assert listed["buffered"] == session.writer.last_seq
    session.close()


def test_file_change_paths_are_kept_relative_to_the_workspace(store_dir, repo):
    """Fixture: a session; one change reported with an absolute path, one with ./, one outside."""
    session = Keeper(store_dir).start(repo)
    session.record({"type": "file_change", "path": str(repo / "payment.py"), "after_hash": "a"})
    session.record({"type": "file_change", "path": "./payment.py", "after_hash": "b"})
    assert list(session.state["file_history"].files) == ["payment.py"]
    with pytest.raises(InvalidEvent, match="outside the workspace"):
        session.record({"type": "file_change", "path": "../elsewhere.py", "after_hash": "c"})
    session.close()


def test_a_workspace_must_be_an_existing_directory(store_dir, repo, tmp_path):
    """Fixture: a missing path and a file given as workspaces, to start and to fork."""
    keeper = Keeper(store_dir)
    for bad in (tmp_path / "missing", repo / "payment.py"):
        with pytest.raises(InvalidWorkspace):
            keeper.start(bad)
    thread = keeper.start(repo).thread_id
    keeper.live[thread].close()
    with pytest.raises(InvalidWorkspace):
        keeper.fork(thread, workspace=str(tmp_path / "missing"))


def test_a_thread_open_elsewhere_can_still_be_forked_through_resume(store_dir, repo):
    """Fixture: a live session in one Keeper; another Keeper resumes with decision fork."""
    live = Keeper(store_dir).start(repo, title="busy")
    live.record({"type": "todo", "items": [{"id": "1", "text": "t"}]})
    live.writer.update_index()
    report, fork = Keeper(store_dir).resume(live.thread_id, workspace=str(repo), decision="fork")
    assert report.new_thread_id == fork.thread_id != live.thread_id
    assert fork.summary()["todos"]["total"] == 1
    fork.close()
    live.close()


def test_a_rebuild_follows_threads_archived_and_started_while_it_scanned(store_dir, repo):
    """Fixture: two closed threads; while a rebuild scans, another store object archives one
    and a third thread is started."""
    keeper = Keeper(store_dir)
    old = keeper.start(repo, title="old")
    old.close()
    other = Keeper(store_dir)
    started = []

    def meanwhile(done: int, total: int) -> None:
        if done == total and not started:
            other.archive(old.thread_id)
            fresh = other.start(repo, title="started during the scan")
            fresh.close()
            started.append(fresh.thread_id)

    Store(store_dir).rebuild(progress=meanwhile)
    titles = {t.title for t in Keeper(store_dir).rows(include_archived=True)}
    assert titles == {"old", "started during the scan"}
    assert Keeper(store_dir).replay(old.thread_id).meta["title"] == "old"
    assert Keeper(store_dir).unarchive(old.thread_id) == 1
