"""`Keeper.close()` and `with Keeper(...)`: the sessions it holds open are closed, its index and
shared-index connections released at once (no file of the store left open by the process), and
the Keeper can be used again afterwards, opening what it needs as a new one would."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import ThreadBusy

from ...conftest import open_files


def test_leaving_the_with_block_closes_its_sessions_and_releases_the_index(
        store_dir: Path, repo: Path) -> None:
    """Fixture: a session left open inside `with Keeper(store)`, the thread listed (the index
    open, its WAL with it): inside, another Keeper cannot resume the thread (busy) and the
    store's index files are open; after the block, none is, and the resume goes through."""
    with Keeper(store_dir) as keeper:
        session = keeper.start(repo, title="left open")
        session.record({"type": "message", "role": "user", "text": "go on"})
        assert [t.thread_id for t in keeper.threads()] == [session.thread_id]
        held = open_files(store_dir)
        assert any(name.endswith("state.db") for name in held), held
        with Keeper(store_dir) as other, pytest.raises(ThreadBusy):
            other.resume(session.thread_id, workspace=str(repo))
    assert open_files(store_dir) == []
    assert keeper.live == {}
    with Keeper(store_dir) as again:
        report, resumed = again.resume(session.thread_id, workspace=str(repo))
        assert report.verdict == "ok" and resumed is not None
    assert open_files(store_dir) == []


def test_closing_closes_the_journal_stores_keepers_and_their_journals(
        store_dir: Path, repo: Path) -> None:
    """Fixture: an agent session's journal (a Keeper of its own, in the store) left open: after
    `close` no file of the store is open, and another Keeper opens the journal at once."""
    agent_session = str(uuid.uuid4())
    keeper = Keeper(store_dir)
    journal = keeper.journal("claude", agent_session, workspace=str(repo))
    journal.record({"type": "message", "role": "user", "text": "from a hook"})
    assert open_files(store_dir) != []
    keeper.close()
    assert open_files(store_dir) == []
    with Keeper(store_dir) as again:
        again.journal("claude", agent_session, wait_s=0).close()
    assert open_files(store_dir) == []


def test_a_closed_keeper_opens_again_on_its_next_use_and_closes_twice(
        store_dir: Path, repo: Path) -> None:
    """Fixture: a Keeper closed after a listing: the next listing answers as before (the index
    opened again), and closing it twice is closing it once."""
    keeper = Keeper(store_dir)
    keeper.start(repo, title="one").close()
    before = [t.thread_id for t in keeper.threads()]
    keeper.close()
    assert open_files(store_dir) == []
    assert [t.thread_id for t in keeper.threads()] == before
    assert open_files(store_dir) != []
    keeper.close()
    keeper.close()
    assert open_files(store_dir) == []


def test_a_keeper_never_opened_closes_without_making_anything(tmp_path: Path) -> None:
    """Fixture: a Keeper of a store path that does not exist yet: closing it creates nothing
    (making a Keeper does no work; closing one opens nothing to close it)."""
    store = tmp_path / "never"
    Keeper(store).close()
    assert not store.exists()


def test_closing_releases_the_shared_index_connection(store_dir: Path, repo: Path,
                                                      pg_url: str) -> None:
    """Fixture: a Keeper sharing its store on a real PostgreSQL: after a session and a listing
    its server connection is open; `close` closes it, and the next listing opens a new one."""
    keeper = Keeper(store_dir, shared_index=pg_url)
    keeper.start(repo, title="shared").close()
    keeper.threads()
    shared = keeper.shared
    assert shared is not None
    connection = shared.partition().db
    assert not connection.closed
    keeper.close()
    assert connection.closed
    assert keeper.threads() and keeper.shared is not shared
    keeper.close()
