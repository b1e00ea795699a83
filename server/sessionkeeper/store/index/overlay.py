"""A read-only view of an index: reads go to it, updates stay in memory (never on disk).

For commands that only read a store they do not own (a store committed to a repository, read by
CI): the store's own catch-up (rows for sessions the index lacks, stale sizes) still works, but
nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence

from .base import Index
from .memory import MemoryIndex
from .rows import ListQuery, SessionRow, ThreadRow, after_cursor, matches, newest_first


class OverlayIndex:
    """`base` for reading; `upsert` and `replace_all` land in a memory overlay that wins."""

    def __init__(self, base: Index) -> None:
        self.base = base
        self.overlay = MemoryIndex()
        self._replaced = False  # replace_all: the base no longer counts

    def upsert(self, rows: Sequence[SessionRow]) -> None:
        """Remember rows in memory (and the threads they make)."""
        known = [s for r in rows for s in self._base_sessions(r.thread_id)
                 if s.session_id not in {x.session_id for x in rows}]
        self.overlay.upsert([*known, *rows])

    def _base_sessions(self, thread_id: str) -> list[SessionRow]:
        return [] if self._replaced else self.base.sessions(thread_id)

    def forget(self, thread_id: str) -> None:
        """Hide a thread (in memory only: the base is never changed)."""
        kept = [s for s in self.sessions() if s.thread_id != thread_id]
        self.replace_all(kept)

    def replace_all(self, rows: Sequence[SessionRow]) -> None:
        """Forget the base; the overlay holds everything."""
        self._replaced = True
        self.overlay.replace_all(rows)

    def list_threads(self, query: ListQuery) -> list[ThreadRow]:
        """The base's page with the overlay's threads in their place, newest first."""
        mine = {t.thread_id: t for t in self.overlay.list_threads(
            ListQuery(include_archived=True, limit=1000)) if matches(t, query)}
        theirs = [] if self._replaced else self.base.list_threads(
            ListQuery(cwd=query.cwd, repo_key=query.repo_key, agent=query.agent,
                      include_archived=query.include_archived, cursor=query.cursor,
                      limit=query.limit + len(mine)))
        merged = [t for t in theirs if t.thread_id not in mine]
        merged += [t for t in mine.values() if after_cursor(t, query.cursor)]
        merged.sort(key=newest_first, reverse=True)
        return merged[:max(0, min(query.limit, 1000))]

    def thread(self, thread_id: str) -> ThreadRow | None:
        """The overlay's thread, else the base's."""
        found = self.overlay.thread(thread_id)
        return found if found is not None or self._replaced else self.base.thread(thread_id)

    def sessions(self, thread_id: str | None = None) -> list[SessionRow]:
        """Sessions from both, the overlay's rows winning."""
        mine = {s.session_id: s for s in self.overlay.sessions(thread_id)}
        theirs = [] if self._replaced else self.base.sessions(thread_id)
        rows = [s for s in theirs if s.session_id not in mine] + list(mine.values())
        return sorted(rows, key=lambda r: (r.first_seq, r.started_at or "", r.session_id))

    def session(self, session_id: str) -> SessionRow | None:
        """The overlay's row, else the base's."""
        found = self.overlay.session(session_id)
        return found if found is not None or self._replaced else self.base.session(session_id)

    def session_ids(self) -> set[str]:
        """Every session either knows."""
        return self.overlay.session_ids() | (set() if self._replaced else self.base.session_ids())

    def is_current(self) -> bool:
        """As current as its base."""
        return self._replaced or self.base.is_current()

    def close(self) -> None:
        """Close the base."""
        self.base.close()
