"""The index interface: what the store asks of any backend (SQLite today, PostgreSQL later).

Every call may fail soft: a backend raises IndexUnavailable (never its own errors) and the store
then rebuilds the index from the rollouts, which are the truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .rows import DirMark, FileCheckpoint, ListQuery, SessionRow, ThreadRow, TreeMarks


class Index(Protocol):
    """An open index."""

    def upsert(self, rows: Sequence[SessionRow]) -> None:
        """Insert or update session rows and refresh their threads, atomically."""
        ...

    def replace_all(self, rows: Sequence[SessionRow], *,
                    tree: dict[str, DirMark] | None = None) -> None:
        """Replace every row of Session Keeper's own rollouts atomically (readers see the old or the
        new index); imported agent files and their rows are kept (their checkpoints vouch for them).
        The tree marks become `tree` (the directories `rows` were listed from), else none."""
        ...

    def import_files(self, files: Sequence[FileCheckpoint], rows: Sequence[SessionRow], *,
                     gone: Sequence[str] = ()) -> None:
        """Store agent files' checkpoints with the session rows they made, and forget the files in
        `gone`, atomically; a file's previous row goes when it now makes another one or none."""
        ...

    def agent_files(self, *, agent: str | None = None,
                    checkpoints: bool = False) -> list[FileCheckpoint]:
        """The imported agent files (of one agent), their checkpoint text only when asked."""
        ...

    def agent_file(self, path: str) -> FileCheckpoint | None:
        """One imported file with its checkpoint, or None."""
        ...

    def files_token(self) -> object:
        """A cheap value that changes when another writer may have changed the imported files
        since this connection last read or wrote them (a cache of agent_files() checks it)."""
        ...

    def forget(self, thread_id: str) -> None:
        """Remove a thread, its sessions and the agent files that made them, atomically."""
        ...

    def list_threads(self, query: ListQuery) -> list[ThreadRow]:
        """A page of threads, newest activity first."""
        ...

    def thread(self, thread_id: str) -> ThreadRow | None:
        """One thread, or None."""
        ...

    def sessions(self, thread_id: str | None = None) -> list[SessionRow]:
        """The sessions of a thread in seq order, or every session."""
        ...

    def session(self, session_id: str) -> SessionRow | None:
        """One session, or None."""
        ...

    def session_ids(self) -> set[str]:
        """Every session the index knows."""
        ...

    def tree_marks(self) -> TreeMarks:
        """The rollout tree's directory marks from the last reconcile (none yet: no dirs)."""
        ...

    def save_tree_marks(self, marks: TreeMarks) -> bool:
        """Keep `marks` unless the generation moved on since they were read; True when kept."""
        ...

    def is_current(self) -> bool:
        """False when the index was replaced or removed under this connection."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


class IndexBackend(Protocol):
    """Where an index lives: opening it, building it anew, setting a bad one aside."""

    def open(self) -> Index:
        """Open the existing index; IndexUnavailable when it is missing or unusable."""
        ...

    def build(self, rows: Sequence[SessionRow]) -> Index:
        """Write a complete index holding `rows` in place of a missing or set-aside one."""
        ...

    def set_aside(self) -> None:
        """Move an unusable index out of the way (kept for inspection)."""
        ...
