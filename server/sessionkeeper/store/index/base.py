"""The index interface: what the store asks of any backend (SQLite today, PostgreSQL later).

Every call may fail soft: a backend raises IndexUnavailable (never its own errors) and the store
then rebuilds the index from the rollouts, which are the truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .rows import ListQuery, SessionRow, ThreadRow


class Index(Protocol):
    """An open index."""

    def upsert(self, rows: Sequence[SessionRow]) -> None:
        """Insert or update session rows and refresh their threads, atomically."""
        ...

    def replace_all(self, rows: Sequence[SessionRow]) -> None:
        """Replace every row atomically (readers see the old or the new index)."""
        ...

    def forget(self, thread_id: str) -> None:
        """Remove a thread and its sessions, atomically (its rollouts were deleted)."""
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
