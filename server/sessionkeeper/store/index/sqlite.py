"""The SQLite index backend: `state.db` in WAL mode, next to the rollouts it caches.

All SQL is parameterized; sqlite errors become IndexBusy or IndexUnavailable (`connection`, which
also refuses a database or -wal/-shm file that is a symlink; it is then set aside with the rest).
A live index is rebuilt in place in one transaction, so other processes keep their connections
(a missing or set-aside one is built anew by `backends`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from ...errors import IndexUnavailable
from .connection import connect, connect_read_only, unavailable
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
from .sql import (
    ALONE_THREADS,
    FILE_COLUMNS,
    INDEX_NAMES,
    INDEX_VERSION,
    INDEXES,
    INSERT_FILE,
    INSERT_SESSION,
    INSERT_THREAD,
    KEEP_TREE_MARKS,
    LONE_THREADS,
    SAVE_TREE_MARKS,
    SCHEMA,
    SHARED_SESSIONS,
    STAMP_COLUMNS,
    TREE_MARKS,
    UPSERT_SESSION,
    VOID_TREE_MARKS,
    decoded,
    file_row,
    marks_of,
    marks_text,
    values_of,
)

_REWRITE_CACHE_KIB = 32 * 1024  # the page cache while the index is rewritten (`rewrite_cache`)


def _refresh(db: sqlite3.Connection, threads: set[str] | None,
             written: Sequence[SessionRow] = ()) -> None:
    """Derive the rows of `threads` (None: of every thread) again from their sessions (one without
    sessions is gone): a thread of one session in SQL, others by `threads_of`; `written`: rows this
    transaction just stored, taken as they are instead of decoded back."""
    if threads is not None and not threads:
        return
    ordered = sorted(threads) if threads is not None else []
    where = f"WHERE thread_id IN ({','.join('?' * len(ordered))})" if threads is not None else ""
    db.execute(f"DELETE FROM threads {where}", ordered)
    db.execute(LONE_THREADS.format(where=where), ordered)
    fresh: dict[str, SessionRow] | None = None
    sessions = []
    for found in db.execute(SHARED_SESSIONS.format(where=where), ordered):
        if fresh is None:
            fresh = {r.session_id: r for r in written}
        sessions.append(fresh.get(found["session_id"]) or SessionRow(**decoded(found)))
    db.executemany(INSERT_THREAD, [values_of(t) for t in threads_of(sessions)])


class SqliteIndex:
    """One connection to state.db (read-only: queries only, for a store this process must not
    change)."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        try:
            self.db = connect_read_only(path) if read_only else connect(path)
            self.inode = os.stat(path).st_ino
            with self.db:
                found = self._version()
                if found is None and not read_only:  # a new index: its tables, then its version
                    self.db.executescript(SCHEMA + ";\n".join(INDEXES) + ";")
                    # OR IGNORE: a process creating the same new index beside us
                    self.db.execute("INSERT OR IGNORE INTO meta VALUES('version', ?)",
                                    (str(INDEX_VERSION),))
                    found = self._version()
                if found != str(INDEX_VERSION):
                    raise sqlite3.DatabaseError(f"index version {found or 'none'} != "
                                                f"{INDEX_VERSION}")
        except sqlite3.Error as exc:
            raise unavailable(f"index {path}", exc) from exc
        except FileNotFoundError as exc:  # replaced by a rebuild while it was being opened
            raise IndexUnavailable(f"index {path} was moved while it was opened") from exc

    def _version(self) -> str | None:
        """The index's version, None when it has none yet. Only read: an index in use is opened
        without a write, so another process writing it (a rebuild, an import) never makes this
        open busy."""
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            return None
        return str(row[0]) if row is not None else None

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def is_current(self) -> bool:
        """False when state.db was replaced or removed since this connection opened it."""
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def upsert(self, rows: Sequence[SessionRow]) -> None:
        """Insert or update session rows and refresh their threads, in one transaction."""
        threads = {r.thread_id for r in rows}
        try:
            with self.db:
                self.db.executemany(UPSERT_SESSION, [values_of(r) for r in rows])
                _refresh(self.db, threads, rows)
        except sqlite3.Error as exc:
            raise unavailable("index update failed", exc) from exc

    def replace_all(self, rows: Sequence[SessionRow], *,
                    tree: dict[str, DirMark] | None = None) -> None:
        """Replace every row of our own rollouts in one transaction (other processes see the old
        or the new index); imported agent files and their rows are kept; `tree`: the marks kept."""
        try:
            with self.db, rewrite_cache(self.db):
                if not self.db.in_transaction:  # one transaction from the first statement on
                    self.db.execute("BEGIN IMMEDIATE")
                for name in INDEX_NAMES:  # bulk insert first, secondary indexes after
                    self.db.execute(f"DROP INDEX IF EXISTS {name}")
                kept = self.db.execute("SELECT 1 FROM sessions WHERE imported = 1 LIMIT 1").fetchone()
                self.db.execute("DELETE FROM sessions WHERE imported = 0" if kept
                                else "DELETE FROM sessions")  # nothing kept: a truncation
                _void_tree_marks(self.db)
                fill_rows(self.db, rows, only=kept is None)
                if tree is not None:  # in this transaction: they vouch for exactly these rows
                    self.db.execute(KEEP_TREE_MARKS, (marks_text(tree),))
        except sqlite3.Error as exc:
            raise unavailable("index rebuild failed", exc) from exc

    def forget(self, thread_id: str) -> None:
        """Remove a thread, its sessions and the agent files that made them, in one transaction."""
        try:
            with self.db:
                self.db.execute("DELETE FROM agent_files WHERE session_id IN "
                                "(SELECT session_id FROM sessions WHERE thread_id=?)", (thread_id,))
                self.db.execute("DELETE FROM sessions WHERE thread_id=?", (thread_id,))
                self.db.execute("DELETE FROM threads WHERE thread_id=?", (thread_id,))
                _void_tree_marks(self.db)
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"index update failed: {exc}") from exc

    def import_files(self, files: Sequence[FileCheckpoint], rows: Sequence[SessionRow], *,
                     gone: Sequence[str] = ()) -> None:
        """Store files with their rows; forget `gone` files and rows no file makes any more."""
        made = {f.path: f.session_id for f in files}
        touched = {r.thread_id for r in rows}
        try:
            with self.db:
                for path in [*made, *gone]:
                    old = self.db.execute("SELECT f.session_id, s.thread_id FROM agent_files f "
                                          "JOIN sessions s ON s.session_id = f.session_id "
                                          "AND s.path = f.path WHERE f.path=?", (path,)).fetchone()
                    if old is not None and old[0] != made.get(path):
                        self.db.execute("DELETE FROM sessions WHERE session_id=?", (old[0],))
                        touched.add(old[1])
                self.db.executemany("DELETE FROM agent_files WHERE path=?", [(p,) for p in gone])
                self.db.executemany(INSERT_FILE, [values_of(f) for f in files])
                self.db.executemany(UPSERT_SESSION, [values_of(r) for r in rows])
                _refresh(self.db, touched, rows)
        except sqlite3.Error as exc:
            raise unavailable("index update failed", exc) from exc

    def agent_files(self, *, agent: str | None = None,
                    checkpoints: bool = False) -> list[FileCheckpoint]:
        """Imported files (of one agent), their checkpoint text only when asked."""
        columns = FILE_COLUMNS if checkpoints else STAMP_COLUMNS
        where, args = ("WHERE agent=?", [agent]) if agent is not None else ("", [])
        try:  # plain tuples: a listing reads thousands of these
            cursor = self.db.cursor()
            cursor.row_factory = None
            found = cursor.execute(f"SELECT {', '.join(columns)} FROM agent_files {where}",
                                   args).fetchall()
        except sqlite3.Error as exc:
            raise unavailable("index query failed", exc) from exc
        at = columns.index("companions")
        out = []
        for values in found:
            row = dict(zip(columns, values, strict=True))
            raw = values[at]
            row["companions"] = tuple(tuple(c) for c in orjson.loads(raw)) if raw and raw != "[]" \
                else ()
            row["archived"] = bool(row["archived"])
            out.append(FileCheckpoint(**row))
        return out

    def files_token(self) -> object:
        """SQLite's data_version: it changes when another connection commits."""
        try:
            return (self.inode, self.db.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error as exc:
            raise unavailable("index query failed", exc) from exc

    def agent_file(self, path: str) -> FileCheckpoint | None:
        """One imported file with its checkpoint, or None."""
        rows = self._rows("SELECT * FROM agent_files WHERE path=?", [path])
        return file_row(rows[0]) if rows else None

    def list_threads(self, query: ListQuery) -> list[ThreadRow]:
        """A page of threads, newest activity first."""
        where, args = ["1"], []
        for column, value in (("cwd", query.cwd), ("repo_key", query.repo_key),
                              ("agent", query.agent), ("machine", query.machine)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if query.archived_only or not query.include_archived:
            where.append(f"archived = {int(query.archived_only)}")
        if query.agents is not None:
            marks = ",".join("?" * len(query.agents))
            where.append(f"(imported = 0 OR agent IN ({marks}))" if query.agents else "imported = 0")
            args += list(query.agents)
        if query.cursor is not None:
            # newest first puts threads without an activity time (NULL) last, by id
            where.append("(last_activity < ? OR (last_activity = ? AND thread_id < ?) "
                         "OR (last_activity IS NULL AND (? != '' OR thread_id < ?)))")
            activity, thread = query.cursor
            args += [activity, activity, thread, activity, thread]
        sql = (f"SELECT * FROM threads WHERE {' AND '.join(where)} "
               "ORDER BY last_activity DESC, thread_id DESC LIMIT ?")
        return [ThreadRow(**r) for r in self._rows(sql, [*args, max(0, min(query.limit, MAX_LIMIT))])]

    def thread(self, thread_id: str) -> ThreadRow | None:
        """One thread row, or None."""
        rows = self._rows("SELECT * FROM threads WHERE thread_id=?", [thread_id])
        return ThreadRow(**rows[0]) if rows else None

    def sessions(self, thread_id: str | None = None) -> list[SessionRow]:
        """Session rows of a thread (in seq order), or all of them."""
        if thread_id is None:
            rows = self._rows("SELECT * FROM sessions ORDER BY first_seq, started_at", [])
        else:
            rows = self._rows("SELECT * FROM sessions WHERE thread_id=? "
                              "ORDER BY first_seq, started_at, session_id", [thread_id])
        return [SessionRow(**r) for r in rows]

    def session(self, session_id: str) -> SessionRow | None:
        """One session row, or None."""
        rows = self._rows("SELECT * FROM sessions WHERE session_id=?", [session_id])
        return SessionRow(**rows[0]) if rows else None

    def session_ids(self) -> set[str]:
        """Every session the index knows."""
        try:
            return {r[0] for r in self.db.execute("SELECT session_id FROM sessions")}
        except sqlite3.Error as exc:
            raise unavailable("index query failed", exc) from exc

    def tree_marks(self) -> TreeMarks:
        """The marks of the last reconcile; damaged ones count as none (everything is listed)."""
        try:
            found = dict(self.db.execute(TREE_MARKS).fetchall())
        except sqlite3.Error as exc:
            raise unavailable("index query failed", exc) from exc
        return marks_of(found)

    def save_tree_marks(self, marks: TreeMarks) -> bool:
        """Keep the marks in one statement, unless a forget or rebuild came in between."""
        try:
            with self.db:
                return self.db.execute(SAVE_TREE_MARKS, (marks_text(marks.dirs),
                                                         marks.generation)).rowcount > 0
        except sqlite3.Error as exc:
            raise unavailable("index update failed", exc) from exc

    def _rows(self, sql: str, args: list[Any]) -> list[dict[str, Any]]:
        try:
            return [decoded(r) for r in self.db.execute(sql, args)]
        except sqlite3.Error as exc:
            raise unavailable("index query failed", exc) from exc


@contextlib.contextmanager
def rewrite_cache(db: sqlite3.Connection) -> Iterator[None]:
    """A page cache large enough for the index of ~40k sessions while it is rewritten (SQLite's
    default 2 MB spills pages of the open transaction to the WAL and reads them back)."""
    before = db.execute("PRAGMA cache_size").fetchone()[0]
    db.execute(f"PRAGMA cache_size=-{_REWRITE_CACHE_KIB}")
    try:
        yield
    finally:
        db.execute(f"PRAGMA cache_size={int(before)}")


def _void_tree_marks(db: sqlite3.Connection) -> None:
    for statement in VOID_TREE_MARKS:
        db.execute(statement)


def fill_rows(db: sqlite3.Connection, rows: Sequence[SessionRow], *, only: bool) -> None:
    """Store session rows (`only`: the table holds no others), derive every thread, build the indexes."""
    db.executemany(INSERT_SESSION, [values_of(r) for r in rows])
    if only and len({r.thread_id for r in rows}) == len(rows):  # one session a thread: no grouping
        db.execute("DELETE FROM threads")
        db.execute(ALONE_THREADS)
        db.execute(INDEXES[0])
    else:
        db.execute(INDEXES[0])  # sessions by thread: what deriving the threads groups by
        _refresh(db, None, rows)
    for statement in INDEXES[1:]:  # built once, after the bulk insert
        db.execute(statement)
