"""A read-only view of an index: reads go to it, updates stay in memory (never on disk).

For commands that only read a store they do not own (a store committed to a repository, read by
CI): the store's own catch-up (rows for sessions the index lacks, stale sizes) and agent imports
still work, but nothing is written. Rows and files the base holds can be hidden (an imported file
that is gone, or now makes another row); the overlay's own rows win over the base's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .base import Index
from .memory import MemoryIndex
from .rows import (
    MAX_LIMIT,
    NO_MARKS,
    DirMark,
    FileCheckpoint,
    ListQuery,
    SessionRow,
    ThreadRow,
    TreeMarks,
    after_cursor,
    matches,
    newest_first,
)


class OverlayIndex:
    """`base` for reading; updates land in a memory overlay that wins (or hides base rows)."""

    def __init__(self, base: Index) -> None:
        self.base = base
        self.overlay = MemoryIndex()
        self._replaced = False  # replace_all: the base no longer counts
        self._hidden: set[str] = set()  # base sessions that no longer count
        self._gone_threads: set[str] = set()  # base threads left without a session
        self._gone_files: set[str] = set()  # base agent files forgotten

    def upsert(self, rows: Sequence[SessionRow]) -> None:
        """Remember rows in memory (and the threads they make)."""
        new = {x.session_id for x in rows}
        known = [s for r in rows for s in self._base_sessions(r.thread_id) if s.session_id not in new]
        self.overlay.upsert([*known, *rows])
        self._gone_threads -= {r.thread_id for r in rows}

    def _base_sessions(self, thread_id: str | None) -> list[SessionRow]:
        if self._replaced:
            return []
        return [s for s in self.base.sessions(thread_id) if s.session_id not in self._hidden]

    def forget(self, thread_id: str) -> None:
        """Hide a thread (in memory only: the base is never changed)."""
        for row in self.sessions(thread_id):
            self._hidden.add(row.session_id)
        self.overlay.forget(thread_id)
        self._gone_threads.add(thread_id)
        self._gone_files |= {f.path for f in self.agent_files() if f.session_id in self._hidden}

    def replace_all(self, rows: Sequence[SessionRow], *,
                    tree: dict[str, DirMark] | None = None) -> None:
        """Forget the base's own rollouts; the overlay holds them (imported files kept; marks never)."""
        imported = [s for s in self.sessions() if s.imported]
        files = self.agent_files(checkpoints=True)
        self._replaced = True
        self.overlay = MemoryIndex()
        self.overlay.import_files(files, imported)
        self.overlay.replace_all(rows)

    def import_files(self, files: Sequence[FileCheckpoint], rows: Sequence[SessionRow], *,
                     gone: Sequence[str] = ()) -> None:
        """Files and rows into memory; base rows no file makes any more are hidden."""
        made = {f.path: f.session_id for f in files}
        dropped: set[str] = set()
        for path in [*made, *gone]:
            old = self.agent_file(path)
            if old is not None and old.session_id and old.session_id != made.get(path):
                row = self.session(old.session_id)
                if row is not None and row.path == path:
                    dropped.add(row.thread_id)
                    self._hidden.add(row.session_id)
        for thread in dropped:  # what is left of each thread, derived again in the overlay
            left = [s for s in self.sessions(thread) if s.session_id not in self._hidden]
            self.overlay.forget(thread)
            if left:
                self.overlay.upsert(left)
            else:
                self._gone_threads.add(thread)
        self._gone_files |= set(gone)
        self._gone_files -= set(made)
        self.overlay.import_files(files, [], gone=gone)
        self.upsert(rows)

    def agent_files(self, *, agent: str | None = None,
                    checkpoints: bool = False) -> list[FileCheckpoint]:
        """The overlay's files, and the base's it does not replace or forget."""
        mine = {f.path: f for f in self.overlay.agent_files(agent=agent, checkpoints=checkpoints)}
        theirs = [] if self._replaced else self.base.agent_files(agent=agent, checkpoints=checkpoints)
        return [*mine.values(), *(f for f in theirs
                                  if f.path not in mine and f.path not in self._gone_files)]

    def agent_file(self, path: str) -> FileCheckpoint | None:
        """The overlay's file, else the base's (unless forgotten)."""
        found = self.overlay.agent_file(path)
        if found is not None or self._replaced or path in self._gone_files:
            return found
        return self.base.agent_file(path)

    def files_token(self) -> object:
        """The base's token and the overlay's."""
        return (None if self._replaced else self.base.files_token(), self.overlay.files_token())

    def list_threads(self, query: ListQuery) -> list[ThreadRow]:
        """The base's page with the overlay's threads in their place, newest first."""
        mine = {t.thread_id: t for t in self.overlay.list_threads(
            ListQuery(include_archived=True, limit=1000)) if matches(t, query)}
        hidden = len(self._gone_threads)
        theirs = [] if self._replaced else self.base.list_threads(
            dataclasses.replace(query, limit=query.limit + len(mine) + hidden))
        merged = [t for t in theirs if t.thread_id not in mine and t.thread_id not in self._gone_threads]
        merged += [t for t in mine.values() if after_cursor(t, query.cursor)]
        merged.sort(key=newest_first, reverse=True)
        return merged[:max(0, min(query.limit, MAX_LIMIT))]

    def thread(self, thread_id: str) -> ThreadRow | None:
        """The overlay's thread, else the base's."""
        found = self.overlay.thread(thread_id)
        if found is not None or self._replaced or thread_id in self._gone_threads:
            return found
        return self.base.thread(thread_id)

    def sessions(self, thread_id: str | None = None) -> list[SessionRow]:
        """Sessions from both, the overlay's rows winning."""
        mine = {s.session_id: s for s in self.overlay.sessions(thread_id)}
        theirs = self._base_sessions(thread_id)
        rows = [s for s in theirs if s.session_id not in mine] + list(mine.values())
        return sorted(rows, key=lambda r: (r.first_seq, r.started_at or "", r.session_id))

    def session(self, session_id: str) -> SessionRow | None:
        """The overlay's row, else the base's."""
        found = self.overlay.session(session_id)
        if found is not None or self._replaced or session_id in self._hidden:
            return found
        return self.base.session(session_id)

    def session_ids(self) -> set[str]:
        """Every session either knows."""
        base = set() if self._replaced else self.base.session_ids() - self._hidden
        return self.overlay.session_ids() | base

    def tree_marks(self) -> TreeMarks:
        """The base's marks while it knows no rollout the overlay does not (nothing hidden)."""
        return NO_MARKS if self._replaced or self._hidden else self.base.tree_marks()

    def save_tree_marks(self, marks: TreeMarks) -> bool:
        """Refused: the base is never changed (a reconcile here lists what changed since)."""
        return False

    def is_current(self) -> bool:
        """As current as its base."""
        return self._replaced or self.base.is_current()

    def close(self) -> None:
        """Close the base."""
        self.base.close()
