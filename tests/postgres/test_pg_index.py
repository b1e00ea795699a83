"""The PostgreSQL index beyond the shared contract: partitions of several stores on one server,
and its failures (wrong password, unreachable host, the server stopped under it) as one typed error
without the password (fixtures: `pg_server`, `pg_url`, tests/conftest.py; a real server)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sessionkeeper.errors import IndexUnavailable
from sessionkeeper.store.index import ListQuery, SessionRow
from sessionkeeper.store.index.postgres import PostgresBackend
from tests.pg_server import PASSWORD

T1, T2 = ("00000000-0000-4000-8000-00000000000" + str(n) for n in (1, 2))


def row(session: str, thread: str, **fields: object) -> SessionRow:
    """A session row of thread `thread`."""
    values: dict[str, object] = {"session_id": session, "thread_id": thread,
                                 "path": f"sessions/{session}.jsonl",
                                 "last_activity": "2026-01-01T00:00:00.000Z", **fields}
    return SessionRow(**values)


def test_two_stores_on_one_server_keep_their_own_partitions(pg_url: str) -> None:
    """Fixture: `pg_url`; stores a and b each build an index, a rebuilds and forgets."""
    a = PostgresBackend(pg_url, store_id="a").build([row("s1", T1)])
    b = PostgresBackend(pg_url, store_id="b").build([row("s2", T1), row("s3", T2)])
    a.replace_all([row("s4", T2)])
    a.forget(T2)
    assert a.session_ids() == set() and a.list_threads(ListQuery()) == []
    assert b.session_ids() == {"s2", "s3"}
    assert {t.thread_id for t in b.list_threads(ListQuery())} == {T1, T2}


def test_a_set_aside_partition_is_missing_and_stale_everywhere(pg_url: str) -> None:
    """Fixture: `pg_url`; one connection keeps the index open while another sets it aside."""
    backend = PostgresBackend(pg_url, store_id="a")
    held = backend.build([row("s1", T1)])
    assert held.is_current()
    backend.set_aside()
    assert not held.is_current()
    with pytest.raises(IndexUnavailable, match="missing"):
        backend.open()
    assert backend.build([]).is_current() and not held.is_current()


def test_a_wrong_password_is_one_clear_error_without_the_password(pg_server) -> None:
    """Fixture: `pg_server`; a URL with another password (and then the password in a conninfo)."""
    wrong = "Wr0ng-" + PASSWORD[::-1]
    for url in (pg_server.url(password=wrong),
                f"host=127.0.0.1 port={pg_server.port} user=sessionkeeper password='{wrong}'"):
        with pytest.raises(IndexUnavailable) as caught:
            PostgresBackend(url, store_id="a").open()
        text = str(caught.value)
        assert "password authentication failed" in text
        assert wrong not in text and PASSWORD not in text
        assert "password=***" in text or "sessionkeeper:***@" in text


def test_an_unreachable_server_is_unavailable_within_the_connect_timeout(pg_server) -> None:
    """Fixture: `pg_server`; a port nobody listens on (its password must not show)."""
    from tests.pg_server import free_port

    started = time.monotonic()
    with pytest.raises(IndexUnavailable) as caught:
        PostgresBackend(pg_server.url(port=free_port()), store_id="a").open()
    assert time.monotonic() - started < 10
    assert "unreachable" in str(caught.value) and PASSWORD not in str(caught.value)
    assert "sessionkeeper:***@127.0.0.1" in str(caught.value)


def test_the_server_stopped_under_an_open_index_fails_soft_and_reopens_after(pg_server,
                                                                              pg_url: str) -> None:
    """Fixture: `pg_server` stopped and started again under an index open on `pg_url`."""
    backend = PostgresBackend(pg_url, store_id="a")
    index = backend.build([row("s1", T1)])
    pg_server.stop()
    try:
        with pytest.raises(IndexUnavailable) as caught:
            index.upsert([row("s2", T2)])
        assert PASSWORD not in str(caught.value)
        assert not index.is_current()
    finally:
        pg_server.start()
    assert backend.open().session_ids() == {"s1"}


def test_a_store_on_the_postgres_index_records_lists_and_rebuilds(pg_url: str, repo: Path,
                                                                   store_dir: Path) -> None:
    """Fixture: `pg_url`, `repo`, `store_dir`; a Store whose index is a PostgreSQL partition."""
    from sessionkeeper.api import Keeper
    from sessionkeeper.store.store import Store
    from tests.seed import record_seed

    keeper = Keeper(store_dir)
    keeper.__dict__["store"] = Store(store_dir, index_backend=PostgresBackend(pg_url,
                                                                              store_id="a"))
    session = record_seed(keeper, repo, close=True)
    rows = keeper.store.list_threads(ListQuery())
    assert [r.thread_id for r in rows] == [session.thread_id]
    assert keeper.store.rebuild()["sessions"] == 1
    assert keeper.check_resume(session.thread_id, workspace=str(repo)).verdict == "ok"


def test_the_teams_view_shows_each_thread_once_as_its_newest_copy_page_after_page(
        pg_url: str) -> None:
    """Fixture: `pg_url`; T1 in store a (older copy) and b (newer, resumed on ci), T2 in a only,
    T3 in c; listed one per page and filtered by machine."""
    from sessionkeeper.store.remote.shared import Shared

    t3 = "00000000-0000-4000-8000-000000000003"
    PostgresBackend(pg_url, store_id="a").build([
        row("s1", T1, machine="laptop", last_activity="2026-01-01"),
        row("s3", T2, machine="laptop", last_activity="2026-01-02")])
    PostgresBackend(pg_url, store_id="b").build([
        row("s1", T1, machine="laptop", last_activity="2026-01-01"),
        row("s2", T1, machine="ci", first_seq=4, last_activity="2026-01-03")])
    PostgresBackend(pg_url, store_id="c").build([row("s4", t3, machine="ci",
                                                     last_activity=None)])
    shared = Shared(pg_url, store_id="a")
    everything = shared.threads(ListQuery())
    assert [(t.thread_id, t.machine, t.session_count) for t in everything] == [
        (T1, "ci", 2), (T2, "laptop", 1), (t3, "ci", 1)]
    seen, cursor = [], None
    while page := shared.threads(ListQuery(limit=1, cursor=cursor)):
        seen += [t.thread_id for t in page]
        cursor = (page[-1].last_activity or "", page[-1].thread_id)
    assert seen == [T1, T2, t3]  # the older copy of T1 never comes back on a later page
    assert [t.thread_id for t in shared.threads(ListQuery(machine="laptop"))] == [T2]
    assert [r.session_id for r in shared.thread_sessions(T1)] == ["s1", "s2"]
