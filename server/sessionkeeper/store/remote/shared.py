"""The shared server as one store sees it: its connection, its own partition of the index, and
the view across every store's partition (the threads and sessions of the whole team).

The cross-store view keeps, for each thread, the partition whose row of it is newest (a store that
pulled a thread and continued it knows more of it than the one that started it), and for each
session the row that reaches the furthest seq. Only rows of Session Keeper's own rollouts are
shared: an agent's log imported on one machine names files on that machine alone.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ..index.pg_connection import failure
from ..index.pg_sql import SESSIONS, THREAD_SELECT, THREADS
from ..index.pg_url import shown
from ..index.rows import MAX_LIMIT, ListQuery, SessionRow, ThreadRow, matches, newest_first
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
        """A page of the team's threads, newest first (each as the store knowing most of it).

        Rows of every partition are read newest first (an index scan, a batch at a time); a
        thread's first row is its newest, the one kept — checked against every partition once
        per batch (a page after a cursor never shows an older copy of a thread already listed);
        the query's filters apply to that row.
        """
        limit = max(0, min(query.limit, MAX_LIMIT))
        out: list[ThreadRow] = []
        seen: set[str] = set()
        cursor, batch = query.cursor, max(2 * limit, 100)
        while len(out) < limit:
            rows = self._newest(cursor, batch)
            fresh = [r for r in rows if r.thread_id not in seen]
            newest = self._newest_of([r.thread_id for r in fresh]) if fresh else {}
            for row in fresh:
                if row.thread_id in seen or newest.get(row.thread_id) != newest_first(row):
                    continue
                seen.add(row.thread_id)
                if matches(row, dataclasses.replace(query, agents=None)):
                    out.append(row)
                    if len(out) == limit:
                        break
            if len(rows) < batch:
                break
            cursor = newest_first(rows[-1])
        return out

    def _newest(self, cursor: tuple[str, str] | None, batch: int) -> list[ThreadRow]:
        """`batch` thread rows of every partition after `cursor`, newest first."""
        where, args = "", []
        if cursor is not None:
            where = ("AND (last_activity < %s OR (last_activity = %s AND thread_id < %s) "
                     "OR (last_activity IS NULL AND (%s <> '' OR thread_id < %s)))")
            activity, thread = cursor
            args = [activity, activity, thread, activity, thread]
        sql = (f"SELECT {THREAD_SELECT} FROM {THREADS} WHERE imported = 0 {where} "
               "ORDER BY last_activity DESC NULLS LAST, thread_id DESC LIMIT %s")
        return self.partition().thread_rows(sql, [*args, batch])

    def _newest_of(self, threads: list[str]) -> dict[str, tuple[str, str]]:
        """Each thread's newest listing key over every partition."""
        try:
            found = self.db.execute(f"SELECT thread_id, max(coalesce(last_activity, '')) FROM "
                                    f"{THREADS} WHERE imported = 0 AND thread_id = ANY(%s) "
                                    "GROUP BY thread_id", (threads,), prepare=True).fetchall()
        except Exception as exc:
            raise self.failed("list", exc) from None
        return {thread: (activity, thread) for thread, activity in found}

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
