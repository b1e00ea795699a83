"""Thread rows derived by each backend equal `threads_of` on the same sessions (the SQLite backend
derives a thread of one session in SQL and the others with `threads_of`): sub-agents, titles,
archived and damaged sessions, several sessions per thread, ties in seq, empty and missing text."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionkeeper.store.index import Index, SessionRow, ThreadRow, threads_of
from sessionkeeper.store.index.backends import SqliteBackend
from sessionkeeper.store.index.memory import MemoryBackend
from sessionkeeper.store.index.rows import SUBAGENT, lone_thread, thread_of

THREADS = [f"00000000-0000-4000-8000-00000000000{n}" for n in range(4)]
TEXT = st.sampled_from([None, "", "a", "b", "é ✓", "z" * 3])
STAMP = st.sampled_from([None, "", "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z"])
SMALL = st.integers(min_value=0, max_value=6)
JSON = st.one_of(st.none(), st.fixed_dictionaries({"title": TEXT, "n": st.integers(-3, 2**53),
                                                   "f": st.floats(allow_nan=False, allow_infinity=False)}))


@st.composite
def session_rows(draw: st.DrawFn) -> list[SessionRow]:
    """Up to 12 sessions with distinct ids spread over four threads, most fields drawn."""
    count = draw(st.integers(min_value=0, max_value=12))
    return [SessionRow(
        session_id=f"s{n:02d}", thread_id=draw(st.sampled_from(THREADS)), path=f"p/{n}.jsonl",
        agent=draw(st.sampled_from(["native", "claude", "codex"])), archived=draw(st.booleans()),
        started_at=draw(STAMP), last_activity=draw(STAMP),
        resumed_from=draw(st.sampled_from([None, "s00"])), forked_from=draw(JSON),
        source=draw(st.sampled_from(["startup", "resume", SUBAGENT, "fork"])),
        cwd=draw(TEXT), repo_key=draw(TEXT), branch=draw(TEXT), title=draw(TEXT),
        first_seq=draw(SMALL), last_seq=draw(SMALL), event_count=draw(SMALL), size=draw(SMALL),
        inode=draw(st.one_of(st.none(), SMALL)), status=draw(st.sampled_from(["ok", "damaged"])),
        summary=draw(JSON), imported=draw(st.booleans()),
    ) for n in range(count)]


def _threads(index: Index) -> dict[str, ThreadRow | None]:
    return {thread: index.thread(thread) for thread in THREADS}


def _expected(rows: Sequence[SessionRow]) -> dict[str, ThreadRow | None]:
    derived = {t.thread_id: t for t in threads_of(rows)}
    return {thread: derived.get(thread) for thread in THREADS}


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(rows=session_rows(), split=st.integers(min_value=0, max_value=12))
def test_every_backend_derives_the_threads_threads_of_derives(rows: list[SessionRow],
                                                              split: int) -> None:
    """Fixture: drawn sessions, built at once, upserted in two batches, and rebuilt in place."""
    with tempfile.TemporaryDirectory() as tmp:
        for backend in (SqliteBackend(Path(tmp) / "state.db"), MemoryBackend()):
            built = backend.build(rows)
            assert _threads(built) == _expected(rows)
            assert sorted(built.session_ids()) == [r.session_id for r in rows]
            grown = backend.build([])
            grown.upsert(rows[:split])
            grown.upsert(rows[split:])
            assert _threads(grown) == _expected(rows)
            grown.replace_all(rows[split:])  # in place: imported rows are kept
            assert _threads(grown) == _expected([r for r in rows[:split] if r.imported]
                                                + rows[split:])
            built.close()
            grown.close()


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(rows=session_rows())
def test_a_thread_of_one_session_is_derived_as_the_general_rule_derives_it(
        rows: list[SessionRow]) -> None:
    """Fixture: drawn sessions, each taken as the only session of its thread."""
    for row in rows:
        assert lone_thread(row) == thread_of(row.thread_id, [row])
