"""An in-memory index backend: the same contract without a database (for the contract suite)."""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import IndexUnavailable
from .rows import (
    ListQuery,
    SessionRow,
    ThreadRow,
    after_cursor,
    matches,
    newest_first,
    thread_order,
    threads_of,
)


class MemoryIndex:
    """Rows in dicts; `fail` makes every call raise IndexUnavailable (a broken index)."""

    def __init__(self) -> None:
        self._sessions: dict[str, SessionRow] = {}
        self._threads: dict[str, ThreadRow] = {}
        self.fail = False
        self.closed = False

    def _check(self) -> None:
        if self.fail or self.closed:
            raise IndexUnavailable("memory index unavailable")

    def upsert(self, rows: Sequence[SessionRow]) -> None:
        """Insert or update session rows and refresh their threads."""
        self._check()
        for row in rows:
            self._sessions[row.session_id] = row
        touched = {r.thread_id for r in rows}
        mine = [s for s in self._sessions.values() if s.thread_id in touched]
        self._threads.update({t.thread_id: t for t in threads_of(mine)})

    def replace_all(self, rows: Sequence[SessionRow]) -> None:
        """Replace every row."""
        self._check()
        self._sessions = {r.session_id: r for r in rows}
        self._threads = {t.thread_id: t for t in threads_of(rows)}

    def forget(self, thread_id: str) -> None:
        """Remove a thread and its sessions."""
        self._check()
        self._sessions = {k: s for k, s in self._sessions.items() if s.thread_id != thread_id}
        self._threads.pop(thread_id, None)

    def list_threads(self, query: ListQuery) -> list[ThreadRow]:
        """A page of threads, newest activity first."""
        self._check()
        chosen = [t for t in self._threads.values()
                  if matches(t, query) and after_cursor(t, query.cursor)]
        chosen.sort(key=newest_first, reverse=True)
        return chosen[:max(0, min(query.limit, 1000))]

    def thread(self, thread_id: str) -> ThreadRow | None:
        """One thread row, or None."""
        self._check()
        return self._threads.get(thread_id)

    def sessions(self, thread_id: str | None = None) -> list[SessionRow]:
        """Session rows of a thread (in seq order), or all of them."""
        self._check()
        rows = [s for s in self._sessions.values() if thread_id in (None, s.thread_id)]
        return sorted(rows, key=thread_order)

    def session(self, session_id: str) -> SessionRow | None:
        """One session row, or None."""
        self._check()
        return self._sessions.get(session_id)

    def session_ids(self) -> set[str]:
        """Every session the index knows."""
        self._check()
        return set(self._sessions)

    def is_current(self) -> bool:
        """Always: nothing can replace it under us."""
        return not self.closed

    def close(self) -> None:
        """Mark it closed."""
        self.closed = True


class MemoryBackend:
    """Holds at most one MemoryIndex; set_aside forgets it."""

    def __init__(self) -> None:
        self.index: MemoryIndex | None = None
        self.builds = 0

    def open(self) -> MemoryIndex:
        """The index, or IndexUnavailable when there is none (or it is broken)."""
        if self.index is None or self.index.fail:
            raise IndexUnavailable("index missing")
        self.index.closed = False
        return self.index

    def build(self, rows: Sequence[SessionRow]) -> MemoryIndex:
        """A new index holding `rows`."""
        self.builds += 1
        self.index = MemoryIndex()
        self.index.replace_all(rows)
        return self.index

    def set_aside(self) -> None:
        """Forget the current index."""
        self.index = None
