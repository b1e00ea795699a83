"""An in-memory index backend: the same contract without a database (for the contract suite)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from ...errors import IndexUnavailable
from .rows import (
    MAX_LIMIT,
    DirMark,
    FileCheckpoint,
    ListQuery,
    SessionRow,
    ThreadRow,
    TreeMarks,
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
        self._files: dict[str, FileCheckpoint] = {}
        self.writes = 0  # every change, for files_token (a memory index has no other writer)
        self.fail = False
        self.closed = False
        self._tree = TreeMarks(0, {})

    def _check(self) -> None:
        if self.fail or self.closed:
            raise IndexUnavailable("memory index unavailable")

    def upsert(self, rows: Sequence[SessionRow]) -> None:
        """Insert or update session rows and refresh their threads."""
        self._check()
        for row in rows:
            self._sessions[row.session_id] = row
        self._refresh({r.thread_id for r in rows})

    def _refresh(self, threads: Iterable[str]) -> None:
        """Derive the rows of `threads` again (a thread without sessions is gone)."""
        self.writes += 1
        touched = set(threads)
        mine = [s for s in self._sessions.values() if s.thread_id in touched]
        for thread in touched:
            self._threads.pop(thread, None)
        self._threads.update({t.thread_id: t for t in threads_of(mine)})

    def replace_all(self, rows: Sequence[SessionRow], *,
                    tree: dict[str, DirMark] | None = None) -> None:
        """Replace every row of our own rollouts (imported ones are kept); marks: `tree` or none."""
        self._check()
        self.writes += 1
        kept = [s for s in self._sessions.values() if s.imported]
        self._sessions = {r.session_id: r for r in [*kept, *rows]}
        self._threads = {t.thread_id: t for t in threads_of(self._sessions.values())}
        self._tree = TreeMarks(self._tree.generation + 1, dict(tree or {}))

    def forget(self, thread_id: str) -> None:
        """Remove a thread, its sessions and the agent files that made them."""
        self._check()
        self.writes += 1
        gone = {k for k, s in self._sessions.items() if s.thread_id == thread_id}
        self._sessions = {k: s for k, s in self._sessions.items() if k not in gone}
        self._files = {p: f for p, f in self._files.items() if f.session_id not in gone}
        self._threads.pop(thread_id, None)
        self._tree = TreeMarks(self._tree.generation + 1, {})

    def import_files(self, files: Sequence[FileCheckpoint], rows: Sequence[SessionRow], *,
                     gone: Sequence[str] = ()) -> None:
        """Store files with their rows; forget `gone` files and rows no file makes any more."""
        self._check()
        touched = {r.thread_id for r in rows}
        made = {f.path: f.session_id for f in files}
        for path in [*made, *gone]:
            old = self._files.get(path)
            if old is not None and old.session_id and old.session_id != made.get(path):
                row = self._sessions.get(old.session_id)
                if row is not None and row.path == path:
                    del self._sessions[old.session_id]
                    touched.add(row.thread_id)
        for path in gone:
            self._files.pop(path, None)
        self._files.update({f.path: f for f in files})
        self._sessions.update({r.session_id: r for r in rows})
        self._refresh(touched)

    def agent_files(self, *, agent: str | None = None,
                    checkpoints: bool = False) -> list[FileCheckpoint]:
        """Imported files (of one agent), checkpoint text only when asked."""
        self._check()
        found = [f for f in self._files.values() if agent in (None, f.agent)]
        return found if checkpoints else [dataclasses.replace(f, checkpoint=None) for f in found]

    def agent_file(self, path: str) -> FileCheckpoint | None:
        """One imported file with its checkpoint, or None."""
        self._check()
        return self._files.get(path)

    def files_token(self) -> object:
        """The number of writes so far."""
        self._check()
        return self.writes

    def list_threads(self, query: ListQuery) -> list[ThreadRow]:
        """A page of threads, newest activity first."""
        self._check()
        chosen = [t for t in self._threads.values()
                  if matches(t, query) and after_cursor(t, query.cursor)]
        chosen.sort(key=newest_first, reverse=True)
        return chosen[:max(0, min(query.limit, MAX_LIMIT))]

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

    def tree_marks(self) -> TreeMarks:
        """The marks last saved."""
        self._check()
        return self._tree

    def save_tree_marks(self, marks: TreeMarks) -> bool:
        """Keep them unless a forget or replace_all came in between."""
        self._check()
        if marks.generation != self._tree.generation:
            return False
        self._tree = marks
        return True

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
