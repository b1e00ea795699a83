"""The shared server as one store sees it: its connection, its own partition of the index, and
the view across every store's partition (the threads and sessions of the whole team).

The cross-store view keeps, for each thread, the partition whose row of it is newest (a store that
pulled a thread and continued it knows more of it than the one that started it), and for each
session the row that reaches the furthest seq. Only rows of Session Keeper's own rollouts are
shared: an agent's log imported on one machine names files on that machine alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..index.pg_connection import failure
from ..index.pg_sql import SESSIONS, THREADS
from ..index.pg_url import shown
from ..index.rows import MAX_LIMIT, ListQuery, SessionRow, ThreadRow
from ..index.sql import decoded

if TYPE_CHECKING:
    import psycopg

    from ..index.postgres import PostgresIndex


class Shared:
    """One store's connection to the shared server at `url` (opened on first need)."""

    def __init__(self, url: str, *, store_id: str) -> None:
        self.url = url
        self.store_id = store_id
        self._index: PostgresIndex | None = None

    def partition(self) -> PostgresIndex:
        """The store's own partition of the shared index (made empty when it has none yet)."""
        if self._index is not None and not self._index.db.closed:
            return self._index
        from ...errors import IndexBusy, IndexUnavailable
        from ..index.postgres import PostgresBackend

        backend = PostgresBackend(self.url, store_id=self.store_id)
        try:
            index = backend.open()
        except IndexBusy:
            raise
        except IndexUnavailable as exc:
            if "missing" not in str(exc) and "version" not in str(exc):
                raise
            index = backend.build([])
        from . import schema

        try:
            schema.ensure(index.db)
        except Exception as exc:
            index.close()
            raise self.failed("migrate", exc) from None
        self._index = index
        return index

    @property
    def db(self) -> psycopg.Connection[Any]:
        """The open connection (autocommit: each write opens its own transaction)."""
        return self.partition().db

    def failed(self, what: str, exc: BaseException) -> Exception:
        """Our typed error for a failure of `what` (the password redacted)."""
        from ...errors import SessionKeeperError

        if isinstance(exc, SessionKeeperError):
            return exc
        if self._index is not None and self._index.db.broken:
            self._index.close()
        return failure(f"shared index {shown(self.url)}: {what}", exc, self.url)

    def threads(self, query: ListQuery) -> list[ThreadRow]:
        """A page of the team's threads, newest first (each as the store knowing most of it)."""
        where, args = ["1 = 1"], []
        for column, value in (("cwd", query.cwd), ("repo_key", query.repo_key),
                              ("agent", query.agent), ("machine", query.machine)):
            if value is not None:
                where.append(f"{column} = %s")
                args.append(value)
        if not query.include_archived:
            where.append("archived = 0")
        if query.cursor is not None:
            where.append("(last_activity < %s OR (last_activity = %s AND thread_id < %s) "
                         "OR (last_activity IS NULL AND (%s <> '' OR thread_id < %s)))")
            activity, thread = query.cursor
            args += [activity, activity, thread, activity, thread]
        sql = (f"SELECT * FROM (SELECT DISTINCT ON (thread_id) * FROM {THREADS} WHERE imported = 0 "
               "ORDER BY thread_id, last_activity DESC NULLS LAST, event_count DESC, store_id) t "
               f"WHERE {' AND '.join(where)} "
               "ORDER BY last_activity DESC NULLS LAST, thread_id DESC LIMIT %s")
        rows = self._rows(sql, [*args, max(0, min(query.limit, MAX_LIMIT))], "list")
        return [ThreadRow(**r) for r in rows]

    def thread_sessions(self, thread_id: str) -> list[SessionRow]:
        """Every store's sessions of a thread, each once (the row reaching the furthest seq)."""
        rows = self._rows(f"SELECT DISTINCT ON (session_id) * FROM {SESSIONS} WHERE thread_id = %s "
                          "AND imported = 0 ORDER BY session_id, last_seq DESC, size DESC",
                          [thread_id], "sessions")
        found = [SessionRow(**r) for r in rows]
        return sorted(found, key=lambda r: (r.first_seq, r.started_at or "", r.session_id))

    def _rows(self, sql: str, args: list[Any], what: str) -> list[dict[str, Any]]:
        from psycopg.rows import dict_row

        try:
            with self.db.cursor(row_factory=dict_row) as cur:
                found = cur.execute(sql, args).fetchall()
        except Exception as exc:
            raise self.failed(what, exc) from None
        for row in found:
            del row["store_id"]
        return [decoded(row) for row in found]  # type: ignore[arg-type]

    def close(self) -> None:
        """Close the connection (if one is open)."""
        if self._index is not None:
            self._index.close()
            self._index = None
