"""One contract for every index backend (SQLite, in-memory, PostgreSQL on a real server started
for the run: `pg_server`, tests/conftest.py): what the store may rely on."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionkeeper.errors import IndexUnavailable
from sessionkeeper.store.index import IndexBackend, ListQuery, SessionRow
from sessionkeeper.store.index.backends import SqliteBackend
from sessionkeeper.store.index.memory import MemoryBackend
from sessionkeeper.store.index.rows import SUBAGENT, FileCheckpoint

T1, T2, T3 = ("00000000-0000-4000-8000-00000000000" + str(n) for n in (1, 2, 3))


def row(session: str, thread: str, *, first_seq: int = 0, last: str = "2026-01-01T00:00:00.000Z",
        **fields: object) -> SessionRow:
    """A session row with the fields a test cares about."""
    values: dict[str, object] = {"session_id": session, "thread_id": thread,
                                 "path": f"sessions/{session}.jsonl", "first_seq": first_seq,
                                 "last_seq": first_seq + 3, "event_count": 3, "started_at": last,
                                 "last_activity": last, "cwd": "/repo", **fields}
    return SessionRow(**values)


@pytest.fixture(params=["sqlite", "memory", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexBackend]:
    """Each backend, empty (no index yet); PostgreSQL's in a new database of `pg_url`."""
    if request.param == "postgres":
        from sessionkeeper.store.index.postgres import PostgresBackend

        yield PostgresBackend(request.getfixturevalue("pg_url"), store_id="store-a")
        return
    yield SqliteBackend(tmp_path / "state.db") if request.param == "sqlite" else MemoryBackend()


def test_a_missing_index_is_unavailable_until_built(backend: IndexBackend) -> None:
    """Fixture: `backend` (each implementation, empty)."""
    with pytest.raises(IndexUnavailable):
        backend.open()
    index = backend.build([row("s1", T1)])
    assert index.session_ids() == {"s1"}
    assert backend.open().session_ids() == {"s1"}


def test_threads_are_derived_from_sessions_and_named_by_the_newest(backend: IndexBackend) -> None:
    """Fixture: `backend`; thread T1 with two sessions (resumed), T2 with one."""
    index = backend.build([])
    index.upsert([row("s1", T1, title="first", branch="a"),
                  row("s2", T1, first_seq=4, title="second", branch="b",
                      last="2026-01-02T00:00:00.000Z"),
                  row("s3", T2, agent="codex", summary={"title": "x"})])
    thread = index.thread(T1)
    assert thread is not None
    assert (thread.title, thread.branch, thread.session_count, thread.event_count) == (
        "second", "b", 2, 6)
    assert thread.latest_session == "s2" and thread.created_at == "2026-01-01T00:00:00.000Z"
    assert [s.session_id for s in index.sessions(T1)] == ["s1", "s2"]
    assert index.thread(T2).agent == "codex"
    assert index.thread(T3) is None and index.session("nope") is None


def test_listing_filters_orders_and_pages(backend: IndexBackend) -> None:
    """Fixture: `backend`; three threads at three times, one archived, one of another agent:
    filters, archived ones too or only those, newest first, pages."""
    index = backend.build([])
    index.upsert([row("s1", T1, last="2026-01-01T00:00:00.000Z"),
                  row("s2", T2, last="2026-01-03T00:00:00.000Z", agent="claude"),
                  row("s3", T3, last="2026-01-02T00:00:00.000Z", archived=True, cwd="/other")])
    newest = [t.thread_id for t in index.list_threads(ListQuery(include_archived=True))]
    assert newest == [T2, T3, T1]
    assert [t.thread_id for t in index.list_threads(ListQuery())] == [T2, T1]
    assert [t.thread_id for t in index.list_threads(ListQuery(agent="claude"))] == [T2]
    assert [t.thread_id for t in index.list_threads(ListQuery(cwd="/other",
                                                              include_archived=True))] == [T3]
    for with_the_others in (False, True):  # only archived ones, whatever include_archived says
        only = ListQuery(archived_only=True, include_archived=with_the_others)
        assert [t.thread_id for t in index.list_threads(only)] == [T3]
    assert index.list_threads(ListQuery(archived_only=True, cwd="/elsewhere")) == []
    first = index.list_threads(ListQuery(include_archived=True, limit=1))
    cursor = (first[0].last_activity or "", first[0].thread_id)
    rest = index.list_threads(ListQuery(include_archived=True, cursor=cursor))
    assert [t.thread_id for t in first + rest] == newest
    assert index.list_threads(ListQuery(limit=0)) == []


def test_paging_reaches_threads_without_an_activity_time(backend: IndexBackend) -> None:
    """Fixture: `backend`; T1 active, T2 and T3 with no last_activity (listed last, by id)."""
    index = backend.build([])
    index.upsert([row("s1", T1), row("s2", T2, last=None), row("s3", T3, last=None)])
    newest = [t.thread_id for t in index.list_threads(ListQuery())]
    assert newest == [T1, T3, T2]
    seen: list[str] = []
    cursor = None
    while True:
        page = index.list_threads(ListQuery(cursor=cursor, limit=1))
        if not page:
            break
        seen += [t.thread_id for t in page]
        cursor = (page[-1].last_activity or "", page[-1].thread_id)
    assert seen == newest


def test_a_listing_reads_one_thread_past_the_largest_page(backend: IndexBackend) -> None:
    """Fixture: `backend`; 1,002 threads: a page of the protocol's largest size (1,000) and the
    one more it reads to know a next page exists."""
    index = backend.build([])
    index.upsert([row(f"s{n}", f"00000000-0000-4000-8000-{n:012d}") for n in range(1002)])
    assert len(index.list_threads(ListQuery(limit=1001))) == 1001


def test_rows_round_trip_every_field(backend: IndexBackend) -> None:
    """Fixture: `backend`; a row with every field set, JSON fields included."""
    full = row("s1", T1, agent="claude", archived=True, resumed_from="s0",
               forked_from={"thread_id": T2, "session_id": "s9", "seq": 4}, source="resume",
               repo_key="abc", branch="main", title="t", size=99, inode=7, status="damaged",
               summary={"title": "t", "todos": {"done": 1, "total": 2}})
    index = backend.build([full])
    assert index.session("s1") == full
    assert index.thread(T1).damaged is True


def test_replace_all_swaps_every_row(backend: IndexBackend) -> None:
    """Fixture: `backend` holding s1; replaced by s2 and s3."""
    index = backend.build([row("s1", T1)])
    index.replace_all([row("s2", T2), row("s3", T3)])
    assert index.session_ids() == {"s2", "s3"} and index.thread(T1) is None


def test_a_session_given_twice_is_one_session_of_its_thread(backend: IndexBackend) -> None:
    """Fixture: `backend`; s1 twice (a rollout copied under another name), the later row kept."""
    later = row("s1", T1, first_seq=0, size=50)
    index = backend.build([row("s1", T1), later, row("s2", T1, first_seq=4)])
    assert index.session("s1") == later and len(index.sessions(T1)) == 2
    thread = index.thread(T1)
    assert thread is not None and (thread.session_count, thread.event_count) == (2, 6)
    index.replace_all([later, later])
    thread = index.thread(T1)
    assert thread is not None and (thread.session_count, thread.event_count) == (1, 3)


def test_forget_removes_one_thread_and_its_sessions(backend: IndexBackend) -> None:
    """Fixture: `backend` holding T1 (two sessions) and T2; T1 forgotten."""
    index = backend.build([row("s1", T1), row("s2", T1, first_seq=4), row("s3", T2)])
    index.forget(T1)
    assert index.thread(T1) is None and index.sessions(T1) == []
    assert index.session_ids() == {"s3"} and index.thread(T2) is not None
    index.forget(T1)  # forgetting an unknown thread is a no-op


def test_upsert_updates_in_place(backend: IndexBackend) -> None:
    """Fixture: `backend`; one row upserted twice with a growing size."""
    index = backend.build([])
    index.upsert([row("s1", T1)])
    index.upsert([dataclasses.replace(row("s1", T1), size=10, last_seq=9)])
    assert index.session("s1").size == 10 and len(index.sessions()) == 1


def test_a_planted_symlink_in_place_of_state_db_is_refused(tmp_path: Path) -> None:
    """Fixture: state.db is a symlink to a file outside the store."""
    outside = tmp_path / "outside.db"
    outside.write_bytes(b"precious")
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "state.db").symlink_to(outside)
    backend = SqliteBackend(tmp_path / "store" / "state.db")
    with pytest.raises(IndexUnavailable, match="symlink"):
        backend.open()
    backend.set_aside()
    backend.build([row("s1", T1)])
    assert outside.read_bytes() == b"precious"
    assert not (tmp_path / "store" / "state.db").is_symlink()


def test_a_read_only_index_answers_with_its_updates_and_never_changes_the_file(tmp_path: Path
                                                                              ) -> None:
    """Fixture: a SQLite index with two threads, opened read-only; one updated, one new."""
    from sessionkeeper.store.index.backends import ReadOnlyBackend

    path = tmp_path / "state.db"
    SqliteBackend(path).build([row("s1", T1, title="one"), row("s2", T2, title="two")]).close()
    before = path.read_bytes()
    index = ReadOnlyBackend(path).open()
    index.upsert([row("s1", T1, title="one, later", last="2026-01-05T00:00:00.000Z"),
                  row("s3", T3, title="three", last="2026-01-04T00:00:00.000Z")])
    assert [t.title for t in index.list_threads(ListQuery())] == ["one, later", "three", "two"]
    assert [t.title for t in index.list_threads(ListQuery(limit=2))] == ["one, later", "three"]
    assert index.session_ids() == {"s1", "s2", "s3"}
    index.forget(T2)
    assert index.thread(T2) is None and index.session("s2") is None
    index.close()
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()


def agent_file(path: str, session: str | None, *, agent: str = "claude", size: int = 10,
               checkpoint: str | None = '{"offset": 10}') -> FileCheckpoint:
    """An imported agent file's checkpoint row."""
    return FileCheckpoint(path=path, agent=agent, root="/home/u/.claude", size=size, mtime_ns=1,
                          inode=2, companions=(("/c/todo.json", 3, 4),), session_id=session,
                          checkpoint=checkpoint)


def imported(session: str, thread: str, path: str, *, last: str = "2026-01-01T00:00:00.000Z",
             **fields: object) -> SessionRow:
    """The session row an agent file makes."""
    changes: dict[str, object] = {"agent": "claude", "imported": True, "path": path, **fields}
    return dataclasses.replace(row(session, thread, last=last), **changes)


def test_agent_files_are_stored_with_their_rows_and_listed_without_checkpoints(
        backend: IndexBackend) -> None:
    """Fixture: `backend`; two claude files (one a sub-agent of the other's thread), one codex."""
    index = backend.build([row("n1", T3, title="native")])
    index.import_files(
        [agent_file("/a.jsonl", "s1"), agent_file("/a/sub.jsonl", "s2"),
         agent_file("/x.jsonl", "s3", agent="codex")],
        [imported("s1", T1, "/a.jsonl", title="main", last="2026-01-01T00:00:00.000Z"),
         imported("s2", T1, "/a/sub.jsonl", title="sub", source=SUBAGENT,
                  last="2026-01-02T00:00:00.000Z"),
         imported("s3", T2, "/x.jsonl", agent="codex")])
    assert {f.path: f.checkpoint for f in index.agent_files()} == {
        "/a.jsonl": None, "/a/sub.jsonl": None, "/x.jsonl": None}
    assert [f.path for f in index.agent_files(agent="codex")] == ["/x.jsonl"]
    stored = index.agent_file("/a.jsonl")
    assert stored == agent_file("/a.jsonl", "s1")
    thread = index.thread(T1)
    assert thread is not None and thread.imported
    assert (thread.title, thread.latest_session, thread.session_count) == ("main", "s1", 2)
    assert thread.last_activity == "2026-01-02T00:00:00.000Z"  # the sub-agent's activity counts


def test_a_gone_file_takes_its_row_and_a_thread_left_empty_with_it(backend: IndexBackend) -> None:
    """Fixture: `backend` holding T1 (a main and a sub-agent file) and T2; files go one by one."""
    index = backend.build([])
    index.import_files([agent_file("/a.jsonl", "s1"), agent_file("/a/sub.jsonl", "s2"),
                        agent_file("/b.jsonl", "s3")],
                       [imported("s1", T1, "/a.jsonl"),
                        imported("s2", T1, "/a/sub.jsonl", source=SUBAGENT),
                        imported("s3", T2, "/b.jsonl")])
    index.import_files([], [], gone=["/a/sub.jsonl", "/b.jsonl"])
    assert index.thread(T2) is None and index.session("s3") is None
    assert [s.session_id for s in index.sessions(T1)] == ["s1"]
    assert {f.path for f in index.agent_files()} == {"/a.jsonl"}
    thread = index.thread(T1)
    assert thread is not None and thread.session_count == 1


def test_a_file_that_now_makes_another_row_or_none_drops_the_old_row(backend: IndexBackend) -> None:
    """Fixture: `backend`; one file re-imported as another thread, then as no thread at all."""
    index = backend.build([])
    index.import_files([agent_file("/a.jsonl", "s1")], [imported("s1", T1, "/a.jsonl")])
    index.import_files([agent_file("/a.jsonl", "s2", size=20)], [imported("s2", T2, "/a.jsonl")])
    assert index.thread(T1) is None and index.thread(T2) is not None
    index.import_files([agent_file("/a.jsonl", None, size=30)], [])
    assert index.thread(T2) is None and index.sessions() == []
    assert index.agent_file("/a.jsonl") == agent_file("/a.jsonl", None, size=30)


def test_a_rebuild_of_our_rollouts_keeps_imported_files_and_hiding_them_is_a_query(
        backend: IndexBackend) -> None:
    """Fixture: `backend` with a native thread and an imported one; replace_all with another."""
    index = backend.build([row("n1", T3, last="2026-01-03T00:00:00.000Z")])
    index.import_files([agent_file("/a.jsonl", "s1")], [imported("s1", T1, "/a.jsonl")])
    index.replace_all([row("n2", T2, last="2026-01-02T00:00:00.000Z")])
    assert [t.thread_id for t in index.list_threads(ListQuery())] == [T2, T1]
    assert [t.thread_id for t in index.list_threads(ListQuery(agents=()))] == [T2]
    assert [t.thread_id for t in index.list_threads(ListQuery(agents=("codex",)))] == [T2]
    assert [t.thread_id for t in index.list_threads(ListQuery(agents=("claude",)))] == [T2, T1]
    assert index.agent_file("/a.jsonl") is not None
    index.forget(T1)
    assert index.agent_files() == [] and index.thread(T1) is None


def test_a_read_only_index_imports_in_memory_and_hides_what_is_gone(tmp_path: Path) -> None:
    """Fixture: a SQLite index with two imported files, opened read-only; one gone, one new."""
    from sessionkeeper.store.index.backends import ReadOnlyBackend

    path = tmp_path / "state.db"
    db = SqliteBackend(path).build([])
    db.import_files([agent_file("/a.jsonl", "s1"), agent_file("/b.jsonl", "s2")],
                    [imported("s1", T1, "/a.jsonl"), imported("s2", T2, "/b.jsonl")])
    db.close()
    before = path.read_bytes()
    index = ReadOnlyBackend(path).open()
    index.import_files([agent_file("/c.jsonl", "s3")], [imported("s3", T3, "/c.jsonl")],
                       gone=["/b.jsonl"])
    assert {t.thread_id for t in index.list_threads(ListQuery())} == {T1, T3}
    assert index.thread(T2) is None and index.session("s2") is None
    assert {f.path for f in index.agent_files()} == {"/a.jsonl", "/c.jsonl"}
    assert index.agent_file("/b.jsonl") is None
    index.close()
    assert path.read_bytes() == before


def test_the_files_token_changes_when_another_connection_imports(backend: IndexBackend) -> None:
    """Fixture: `backend`; one connection reads the token, another imports a file."""
    reader = backend.build([])
    before = reader.files_token()
    assert reader.files_token() == before  # reading changes nothing
    writer = backend.open()
    writer.import_files([agent_file("/a.jsonl", "s1")], [imported("s1", T1, "/a.jsonl")])
    assert reader.files_token() != before


def test_tree_marks_are_kept_until_rows_of_rollouts_leave_the_index(backend: IndexBackend) -> None:
    """Fixture: `backend` with one thread; marks saved, then a forget and a replace_all."""
    index = backend.build([row("s1", T1)])
    first = index.tree_marks()
    assert first.dirs == {}
    dirs = {"sessions": (11, 22, True), "sessions/2026": (12, 23, False)}
    assert index.save_tree_marks(first._replace(dirs=dirs))
    assert backend.open().tree_marks().dirs == dirs
    index.upsert([row("s2", T2)])  # rows coming in leave the marks as they are
    assert index.tree_marks().dirs == dirs
    index.forget(T1)
    assert index.tree_marks().dirs == {}
    assert not index.save_tree_marks(first._replace(dirs=dirs))  # read before the forget
    assert index.save_tree_marks(index.tree_marks()._replace(dirs=dirs))
    before = index.tree_marks()
    index.replace_all([row("s3", T3)])
    assert index.tree_marks().dirs == {} and not index.save_tree_marks(before)


def test_damaged_tree_marks_count_as_none_and_are_replaced(tmp_path: Path) -> None:
    """Fixture: a SQLite index whose stored marks are not what it wrote."""
    import sqlite3

    index = SqliteBackend(tmp_path / "state.db").build([row("s1", T1)])
    db = sqlite3.connect(tmp_path / "state.db")
    with db:
        db.execute("INSERT INTO meta VALUES('tree', '{\"sessions\": [1]}')")
    db.close()
    marks = index.tree_marks()
    assert marks.dirs == {}
    assert index.save_tree_marks(marks._replace(dirs={"sessions": (1, 2, True)}))
    assert index.tree_marks().dirs == {"sessions": (1, 2, True)}
