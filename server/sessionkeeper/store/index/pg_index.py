"""A store's partition of the PostgreSQL index, read and written over one connection.

The same contract as state.db (tests/contract/test_index_contract.py runs it unchanged): every
call is one transaction, every failure one of our typed errors with the password redacted
(`pg_connection`). A store's partition is its rows under its `store_id`; every write holds the
store's advisory lock, so its derived thread rows (`rows.threads_of`) never interleave with
another writer's. `is_current` turns False once the partition was set aside or built anew
(its `incarnation` meta row changed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ...errors import IndexUnavailable
from . import pg_sql as q
from .pg_connection import failure
from .pg_rows import fill, thread_row_of
from .pg_url import shown
from .rows import (
    MAX_LIMIT,
    DirMark,
    FileCheckpoint,
    ListQuery,
    SessionRow,
    ThreadRow,
    TreeMarks,
    threads_of,
)
from .sql import decoded, file_row, marks_of, marks_text, values_of

if TYPE_CHECKING:
    import psycopg

_MARK_KEYS = ["tree", "tree_generation"]


class PostgresIndex:
    """One connection to the shared server (autocommit: each write is one explicit
    transaction), reading and writing one store's partition."""

    def __init__(self, db: psycopg.Connection[Any], *, url: str, store_id: str,
                 incarnation: str) -> None:
        self.db = db
        self.url = url
        self.store_id = store_id
        self.incarnation = incarnation

    # ---- plumbing -------------------------------------------------------------------------

    def _fail(self, what: str, exc: BaseException) -> IndexUnavailable:
        if self.db.broken:  # the server went away: this connection is done
            self.db.close()
        return failure(f"shared index {shown(self.url)}: {what}", exc, self.url)

    def _rows(self, sql: str, args: Sequence[Any]) -> list[dict[str, Any]]:
        import psycopg
        from psycopg.rows import dict_row

        try:
            with self.db.cursor(row_factory=dict_row) as cur:
                found = cur.execute(sql, args).fetchall()
        except psycopg.Error as exc:
            raise self._fail("query failed", exc) from None
        for row in found:
            del row["store_id"]
        return [decoded(row) for row in found]  # type: ignore[arg-type]

    def _write(self, work: Any, what: str = "update failed") -> Any:
        """Run `work(cursor)` in one transaction holding the store's lock."""
        import psycopg

        try:
            with self.db.transaction(), self.db.cursor() as cur:
                cur.execute(q.STORE_LOCK, (self.store_id,))
                return work(cur)
        except psycopg.Error as exc:
            raise self._fail(what, exc) from None

    def _refresh(self, cur: Any, threads: Iterable[str]) -> None:
        """Derive the rows of `threads` again from their sessions (one without any is gone)."""
        from psycopg.rows import dict_row

        wanted = sorted(set(threads))
        if not wanted:
            return
        with self.db.cursor(row_factory=dict_row) as read:
            found = read.execute(f"SELECT * FROM {q.SESSIONS} WHERE store_id = %s AND "
                                 "thread_id = ANY(%s)", (self.store_id, wanted)).fetchall()
        sessions = []
        for row in found:
            del row["store_id"]
            sessions.append(SessionRow(**decoded(row)))  # type: ignore[arg-type]
        cur.execute(f"DELETE FROM {q.THREADS} WHERE store_id = %s AND thread_id = ANY(%s)",
                    (self.store_id, wanted))
        cur.executemany(q.INSERT_THREAD, [(self.store_id, *values_of(t))
                                          for t in threads_of(sessions)])

    def _bump(self, cur: Any, *keys: str) -> None:
        for key in keys:
            cur.execute(q.BUMP, (self.store_id, key))

    # ---- writes ----------------------------------------------------------------------------

    def upsert(self, rows: Sequence[SessionRow]) -> None:
        """Insert or update session rows and refresh their threads, in one transaction."""
        def work(cur: Any) -> None:
            cur.executemany(q.UPSERT_SESSION, [(self.store_id, *values_of(r)) for r in rows])
            self._refresh(cur, {r.thread_id for r in rows})
        if rows:
            self._write(work)

    def replace_all(self, rows: Sequence[SessionRow], *,
                    tree: dict[str, DirMark] | None = None) -> None:
        """Replace every row of our own rollouts (imported ones are kept) in one transaction."""
        def work(cur: Any) -> None:
            cur.execute(f"DELETE FROM {q.SESSIONS} WHERE store_id = %s AND imported = 0",
                        (self.store_id,))
            cur.execute(f"DELETE FROM {q.THREADS} WHERE store_id = %s", (self.store_id,))
            fill(cur, self.store_id, rows)
            kept = cur.execute(f"SELECT DISTINCT thread_id FROM {q.SESSIONS} WHERE store_id = %s "
                               "AND imported = 1", (self.store_id,)).fetchall()
            self._refresh(cur, [t for (t,) in kept])
            _void_tree_marks(cur, self.store_id)
            if tree is not None:
                cur.execute(q.SET_META, (self.store_id, "tree", marks_text(tree)))
            self._bump(cur, "files_generation")
        self._write(work, "rebuild failed")

    def forget(self, thread_id: str) -> None:
        """Remove a thread, its sessions and the agent files that made them, in one transaction."""
        def work(cur: Any) -> None:
            cur.execute(f"DELETE FROM {q.FILES} WHERE store_id = %s AND session_id IN (SELECT "
                        f"session_id FROM {q.SESSIONS} WHERE store_id = %s AND thread_id = %s)",
                        (self.store_id, self.store_id, thread_id))
            for table in (q.SESSIONS, q.THREADS):
                cur.execute(f"DELETE FROM {table} WHERE store_id = %s AND thread_id = %s",
                            (self.store_id, thread_id))
            _void_tree_marks(cur, self.store_id)
            self._bump(cur, "files_generation")
        self._write(work)

    def import_files(self, files: Sequence[FileCheckpoint], rows: Sequence[SessionRow], *,
                     gone: Sequence[str] = ()) -> None:
        """Store files with their rows; forget `gone` files and rows no file makes any more."""
        made = {f.path: f.session_id for f in files}

        def work(cur: Any) -> None:
            touched = {r.thread_id for r in rows}
            paths = [*made, *gone]
            old = cur.execute(
                f"SELECT f.path, f.session_id, s.thread_id FROM {q.FILES} f JOIN {q.SESSIONS} s "
                "ON s.store_id = f.store_id AND s.session_id = f.session_id AND s.path = f.path "
                "WHERE f.store_id = %s AND f.path = ANY(%s)", (self.store_id, paths)).fetchall()
            for path, session, thread in old:
                if session != made.get(path):
                    cur.execute(f"DELETE FROM {q.SESSIONS} WHERE store_id = %s AND "
                                "session_id = %s", (self.store_id, session))
                    touched.add(thread)
            cur.execute(f"DELETE FROM {q.FILES} WHERE store_id = %s AND path = ANY(%s)",
                        (self.store_id, list(gone)))
            cur.executemany(q.UPSERT_FILE, [(self.store_id, *values_of(f)) for f in files])
            cur.executemany(q.UPSERT_SESSION, [(self.store_id, *values_of(r)) for r in rows])
            self._refresh(cur, touched)
            self._bump(cur, "files_generation")
        self._write(work)

    def save_tree_marks(self, marks: TreeMarks) -> bool:
        """Keep the marks unless a forget or rebuild came in between (checked under the lock)."""
        def work(cur: Any) -> bool:
            cur.execute(q.SAVE_TREE_MARKS, (self.store_id, marks_text(marks.dirs), self.store_id,
                                            marks.generation))
            return bool(cur.rowcount > 0)
        return bool(self._write(work))

    # ---- reads -----------------------------------------------------------------------------

    def agent_files(self, *, agent: str | None = None,
                    checkpoints: bool = False) -> list[FileCheckpoint]:
        """Imported files (of one agent), their checkpoint text only when asked."""
        columns = q.FILE_COLUMNS if checkpoints else q.STAMP_COLUMNS
        where, args = ("AND agent = %s", [agent]) if agent is not None else ("", [])
        rows = self._rows(f"SELECT store_id, {', '.join(columns)} FROM {q.FILES} "
                          f"WHERE store_id = %s {where}", [self.store_id, *args])
        return [file_row(r) for r in rows]

    def agent_file(self, path: str) -> FileCheckpoint | None:
        """One imported file with its checkpoint, or None."""
        rows = self._rows(f"SELECT * FROM {q.FILES} WHERE store_id = %s AND path = %s",
                          [self.store_id, path])
        return file_row(rows[0]) if rows else None

    def files_token(self) -> object:
        """The partition's incarnation and its count of changes to imported files."""
        found = self._meta(["files_generation"])
        return (self.incarnation, found.get("files_generation", "0"))

    def list_threads(self, query: ListQuery) -> list[ThreadRow]:
        """A page of threads, newest activity first (no activity time: last, by id)."""
        where, args = ["store_id = %s"], [self.store_id]
        for column, value in (("cwd", query.cwd), ("repo_key", query.repo_key),
                              ("agent", query.agent), ("machine", query.machine)):
            if value is not None:
                where.append(f"{column} = %s")
                args.append(value)
        if query.archived_only or not query.include_archived:
            where.append(f"archived = {int(query.archived_only)}")
        if query.agents is not None:
            where.append("(imported = 0 OR agent = ANY(%s))")
            args.append(list(query.agents))  # type: ignore[arg-type]
        if query.cursor is not None:
            where.append("(last_activity < %s OR (last_activity = %s AND thread_id < %s) "
                         "OR (last_activity IS NULL AND (%s <> '' OR thread_id < %s)))")
            activity, thread = query.cursor
            args += [activity, activity, thread, activity, thread]
        limit = max(0, min(query.limit, MAX_LIMIT))
        if not isinstance(limit, int):
            raise TypeError(f"ListQuery.limit must be an int, not {type(limit).__name__}")
        # the limit is written into the statement: with `LIMIT $n` the server's generic plan is
        # estimated dearer than a custom one, so each call was planned anew (~40 us of a page)
        sql = (f"SELECT {q.THREAD_SELECT} FROM {q.THREADS} WHERE {' AND '.join(where)} "
               f"ORDER BY last_activity DESC NULLS LAST, thread_id DESC LIMIT {limit:d}")
        return self.thread_rows(sql, args)

    def thread_rows(self, sql: str, args: Sequence[Any]) -> list[ThreadRow]:
        """ThreadRows of a query selecting q.THREAD_SELECT (a prepared statement; plain tuples,
        each made a row by `pg_rows.thread_row_of`)."""
        try:
            found = self.db.execute(sql, args, prepare=True).fetchall()
        except Exception as exc:
            raise self._fail("query failed", exc) from None
        return [thread_row_of(values) for values in found]

    def thread(self, thread_id: str) -> ThreadRow | None:
        """One thread row, or None."""
        rows = self.thread_rows(f"SELECT {q.THREAD_SELECT} FROM {q.THREADS} WHERE store_id = %s "
                                "AND thread_id = %s", [self.store_id, thread_id])
        return rows[0] if rows else None

    def sessions(self, thread_id: str | None = None) -> list[SessionRow]:
        """Session rows of a thread (in seq order), or all of them."""
        where, args = ("AND thread_id = %s", [thread_id]) if thread_id is not None else ("", [])
        rows = self._rows(f"SELECT * FROM {q.SESSIONS} WHERE store_id = %s {where} "
                          "ORDER BY first_seq, started_at, session_id", [self.store_id, *args])
        return [SessionRow(**r) for r in rows]

    def session(self, session_id: str) -> SessionRow | None:
        """One session row, or None."""
        rows = self._rows(f"SELECT * FROM {q.SESSIONS} WHERE store_id = %s AND session_id = %s",
                          [self.store_id, session_id])
        return SessionRow(**rows[0]) if rows else None

    def session_ids(self) -> set[str]:
        """Every session the partition knows."""
        rows = self._rows(f"SELECT store_id, session_id FROM {q.SESSIONS} WHERE store_id = %s",
                          [self.store_id])
        return {r["session_id"] for r in rows}

    def tree_marks(self) -> TreeMarks:
        """The marks of the last reconcile; damaged ones count as none."""
        return marks_of(self._meta(_MARK_KEYS))

    def _meta(self, keys: list[str]) -> dict[str, str]:
        import psycopg

        try:
            found = dict(self.db.execute(q.GET_META, (self.store_id, keys)).fetchall())
        except psycopg.Error as exc:
            raise self._fail("query failed", exc) from None
        return found

    def is_current(self) -> bool:
        """False when the partition was set aside or rebuilt anew since this connection opened."""
        if self.db.closed:
            return False
        try:
            return self._meta(["incarnation"]).get("incarnation") == self.incarnation
        except IndexUnavailable:
            return False

    def close(self) -> None:
        """Close the connection."""
        self.db.close()


def _void_tree_marks(cur: Any, store_id: str) -> None:
    cur.execute(q.BUMP, (store_id, "tree_generation"))
    cur.execute(f"DELETE FROM {q.META} WHERE store_id = %s AND key = 'tree'", (store_id,))
