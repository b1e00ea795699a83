"""The derived SQLite index `state.db`: threads and sessions for fast listing.

It is a cache of the rollouts: every row can be rebuilt from them (`rebuild` writes a temporary
database and renames it into place). Every call may fail soft: sqlite errors become
IndexUnavailable and callers fall back to the rollouts. All SQL is parameterized.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import IndexUnavailable

INDEX_VERSION = 2  # 2: sessions.first_seq (order within a thread)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions(
  session_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, path TEXT NOT NULL UNIQUE,
  archived INTEGER NOT NULL DEFAULT 0, started_at TEXT, last_activity TEXT,
  resumed_from TEXT, forked_from TEXT, source TEXT, cwd TEXT, repo_key TEXT, branch TEXT,
  title TEXT, last_seq INTEGER NOT NULL DEFAULT 0, durable_seq INTEGER NOT NULL DEFAULT 0,
  size INTEGER NOT NULL DEFAULT 0, inode INTEGER, status TEXT NOT NULL DEFAULT 'ok',
  event_count INTEGER NOT NULL DEFAULT 0, first_seq INTEGER NOT NULL DEFAULT 0, summary TEXT);
CREATE TABLE IF NOT EXISTS threads(
  thread_id TEXT PRIMARY KEY, title TEXT, cwd TEXT, repo_key TEXT, branch TEXT,
  created_at TEXT, last_activity TEXT, archived INTEGER NOT NULL DEFAULT 0,
  latest_session TEXT, session_count INTEGER NOT NULL DEFAULT 0,
  event_count INTEGER NOT NULL DEFAULT 0, damaged INTEGER NOT NULL DEFAULT 0,
  forked_from TEXT, summary TEXT);
"""
_INDEXES = """
CREATE INDEX IF NOT EXISTS sessions_thread ON sessions(thread_id, first_seq);
CREATE INDEX IF NOT EXISTS threads_recent ON threads(archived, last_activity DESC, thread_id);
CREATE INDEX IF NOT EXISTS threads_cwd ON threads(cwd, archived, last_activity DESC, thread_id);
"""
_INDEX_NAMES = ("sessions_thread", "threads_recent", "threads_cwd")
SESSION_COLUMNS = (
    "session_id", "thread_id", "path", "archived", "started_at", "last_activity", "resumed_from",
    "forked_from", "source", "cwd", "repo_key", "branch", "title", "last_seq", "durable_seq",
    "size", "inode", "status", "event_count", "first_seq", "summary",
)
_INSERT_SESSION = (f"INSERT OR REPLACE INTO sessions({','.join(SESSION_COLUMNS)}) "
                   f"VALUES({','.join('?' * len(SESSION_COLUMNS))})")
_UPSERT = (
    f"INSERT INTO sessions({','.join(SESSION_COLUMNS)}) "
    f"VALUES({','.join('?' * len(SESSION_COLUMNS))}) ON CONFLICT(session_id) DO UPDATE SET "
    + ",".join(f"{c}=excluded.{c}" for c in SESSION_COLUMNS[1:])
)
THREAD_COLUMNS = (
    "thread_id", "title", "cwd", "repo_key", "branch", "created_at", "last_activity", "archived",
    "latest_session", "session_count", "event_count", "damaged", "forked_from", "summary",
)


_INSERT_THREAD = (f"INSERT OR REPLACE INTO threads({','.join(THREAD_COLUMNS)}) "
                  f"VALUES({','.join('?' * len(THREAD_COLUMNS))})")


def thread_rows(sessions: Iterable[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Thread rows derived from session rows: the newest session (by start) names the thread."""
    by_thread: dict[str, list[dict[str, Any]]] = {}
    for row in sessions:
        by_thread.setdefault(row["thread_id"], []).append(row)
    out = []
    for thread, rows in by_thread.items():
        rows.sort(key=thread_order)
        latest = rows[-1]
        titled = [r["title"] for r in rows if r.get("title")]
        out.append((
            thread, titled[-1] if titled else None, latest["cwd"], latest["repo_key"],
            latest["branch"], rows[0]["started_at"],
            max((r["last_activity"] or "") for r in rows) or None, latest["archived"],
            latest["session_id"], len(rows), sum(r["event_count"] or 0 for r in rows),
            int(any(r["status"] != "ok" for r in rows)), _json_text(rows[0].get("forked_from")),
            _json_text(latest.get("summary")),
        ))
    return out


def thread_order(row: dict[str, Any]) -> tuple[int, str, str]:
    """Sessions of a thread in seq order (seq is thread-wide; clocks can step back)."""
    return (row.get("first_seq") or 0, row.get("started_at") or "", row["session_id"])


def _json_text(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else orjson.dumps(value).decode()


@dataclass(frozen=True)
class ListQuery:
    """Which threads to list: a workspace (cwd) filter, archived ones too, and a page."""

    cwd: str | None = None
    include_archived: bool = False
    limit: int = 50
    cursor: tuple[str, str] | None = None  # (last_activity, thread_id) of the previous page's end


def _decode(row: sqlite3.Row, json_fields: Iterable[str]) -> dict[str, Any]:
    out = dict(row)
    for name in json_fields:
        if out.get(name):
            out[name] = orjson.loads(out[name])
    return out


class Index:
    """One connection to state.db; sqlite errors surface as IndexUnavailable."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.db = _connect(path)
            self.inode = os.stat(path).st_ino
            self._ensure_schema()
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"index {path}: {exc}") from exc

    def _ensure_schema(self) -> None:
        with self.db:
            self.db.executescript(_SCHEMA + _INDEXES)
            row = self.db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
            if row is None:
                self.db.execute("INSERT INTO meta VALUES('version', ?)", (str(INDEX_VERSION),))
            elif row[0] != str(INDEX_VERSION):
                raise sqlite3.DatabaseError(f"index version {row[0]} != {INDEX_VERSION}")

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def upsert_sessions(self, rows: list[dict[str, Any]]) -> None:
        """Insert or update session rows and refresh their threads, in one transaction."""
        try:
            with self.db:
                self.db.executemany(_UPSERT, [_session_values(r) for r in rows])
                self._refresh_threads({r["thread_id"] for r in rows})
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"index update failed: {exc}") from exc

    def delete_sessions(self, session_ids: list[str]) -> None:
        """Remove session rows (files gone) and refresh or drop their threads."""
        try:
            with self.db:
                threads: set[str] = set()
                for sid in session_ids:
                    row = self.db.execute(
                        "SELECT thread_id FROM sessions WHERE session_id=?", (sid,)).fetchone()
                    if row:
                        threads.add(row[0])
                    self.db.execute("DELETE FROM sessions WHERE session_id=?", (sid,))
                for thread in threads:
                    self.db.execute("DELETE FROM threads WHERE thread_id=?", (thread,))
                self._refresh_threads(threads)
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"index update failed: {exc}") from exc

    def _refresh_threads(self, threads: set[str]) -> None:
        marks = ",".join("?" * len(threads))
        sessions = [dict(r) for r in self.db.execute(
            f"SELECT * FROM sessions WHERE thread_id IN ({marks})", list(threads))]
        self.db.executemany(_INSERT_THREAD, thread_rows(sessions))

    def list_threads(self, query: ListQuery) -> list[dict[str, Any]]:
        """A page of threads, newest activity first."""
        where = ["archived = ?"] if not query.include_archived else ["1"]
        args: list[Any] = [0] if not query.include_archived else []
        if query.cwd is not None:
            where.append("cwd = ?")
            args.append(query.cwd)
        if query.cursor is not None:
            where.append("(last_activity < ? OR (last_activity = ? AND thread_id < ?))")
            args += [query.cursor[0], query.cursor[0], query.cursor[1]]
        sql = (f"SELECT * FROM threads WHERE {' AND '.join(where)} "
               "ORDER BY last_activity DESC, thread_id DESC LIMIT ?")
        return self._rows(sql, [*args, max(1, min(query.limit, 1000))], ("summary",))

    def thread(self, thread_id: str) -> dict[str, Any] | None:
        """One thread row, or None."""
        rows = self._rows("SELECT * FROM threads WHERE thread_id=?", [thread_id], ("summary",))
        return rows[0] if rows else None

    def sessions(self, thread_id: str | None = None) -> list[dict[str, Any]]:
        """Session rows of a thread (oldest first), or all of them."""
        if thread_id is None:
            return self._rows("SELECT * FROM sessions ORDER BY first_seq, started_at", [],
                              ("summary",))
        return self._rows(
            "SELECT * FROM sessions WHERE thread_id=? ORDER BY first_seq, started_at, session_id",
            [thread_id], ("summary",))

    def session_ids(self) -> set[str]:
        """Every session the index knows."""
        try:
            return {r[0] for r in self.db.execute("SELECT session_id FROM sessions")}
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"index query failed: {exc}") from exc

    def replace_all(self, rows: list[dict[str, Any]]) -> None:
        """Replace every row in one transaction (other processes see the old or the new index)."""
        try:
            with self.db:
                for name in _INDEX_NAMES:  # bulk insert first, secondary indexes after
                    self.db.execute(f"DROP INDEX IF EXISTS {name}")
                self.db.execute("DELETE FROM sessions")
                self.db.execute("DELETE FROM threads")
                self.db.executemany(_INSERT_SESSION, [_session_values(r) for r in rows])
                self.db.executemany(_INSERT_THREAD, thread_rows(rows))
                for statement in _INDEXES.strip().splitlines():
                    self.db.execute(statement)
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"index rebuild failed: {exc}") from exc

    def is_current(self) -> bool:
        """False when state.db was replaced or removed since this connection opened it."""
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def session(self, session_id: str) -> dict[str, Any] | None:
        """One session row, or None."""
        rows = self._rows("SELECT * FROM sessions WHERE session_id=?", [session_id], ("summary",))
        return rows[0] if rows else None

    def latest_thread(self, cwd: str | None) -> dict[str, Any] | None:
        """The most recently active unarchived thread (of a workspace)."""
        rows = self.list_threads(ListQuery(cwd=cwd, limit=1))
        return rows[0] if rows else None

    def _rows(self, sql: str, args: list[Any], json_fields: tuple[str, ...]) -> list[dict]:
        try:
            return [_decode(r, json_fields) for r in self.db.execute(sql, args)]
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"index query failed: {exc}") from exc


def _session_values(row: dict[str, Any]) -> tuple[Any, ...]:
    values = []
    for column in SESSION_COLUMNS:
        value = row.get(column)
        if column in ("summary", "forked_from"):
            value = _json_text(value)
        values.append(value)
    return tuple(values)


def _connect(path: Path, *, fast: bool = False) -> sqlite3.Connection:
    if not path.exists():  # create it private; never open+close a live database (POSIX locks)
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                             | os.O_CLOEXEC, 0o600))
    db = sqlite3.connect(path, timeout=5.0, isolation_level="DEFERRED", check_same_thread=False)
    db.row_factory = sqlite3.Row
    if fast:
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
    else:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA busy_timeout=5000")
    return db


def build(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write a complete index with `rows` to a temporary file, then rename it into place.

    Only for a missing (or set-aside) index: a live one is rebuilt in place (Index.replace_all).
    """
    tmp = path.with_name(f".{path.name}.rebuild-{os.getpid()}")
    for stale in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        stale.unlink(missing_ok=True)
    try:
        with closing(_connect(tmp, fast=True)) as db:
            db.executescript(_SCHEMA)
            db.execute("INSERT INTO meta VALUES('version', ?)", (str(INDEX_VERSION),))
            db.executemany(_INSERT_SESSION, [_session_values(r) for r in rows])
            db.executemany(_INSERT_THREAD, thread_rows(rows))
            db.executescript(_INDEXES)  # built once, after the bulk insert
            db.commit()
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        for side in (Path(f"{path}-wal"), Path(f"{path}-shm")):
            side.unlink(missing_ok=True)
        os.replace(tmp, path)
    except (sqlite3.Error, OSError) as exc:
        tmp.unlink(missing_ok=True)
        raise IndexUnavailable(f"index rebuild failed: {exc}") from exc
