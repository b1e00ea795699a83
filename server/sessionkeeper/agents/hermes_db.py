"""Read-only access to Hermes Agent's session database, `state.db` (SQLite, WAL), while Hermes writes.

How it is opened (nothing is ever created or written under a Hermes home):
- with its `-wal` and `-shm` beside it (Hermes ran, or runs now): `mode=ro`, a normal reader of a
  WAL database, so what Hermes committed and has not checkpointed is seen too. SQLite maps the
  `-shm` wal-index as every reader does; its bytes stay what Hermes wrote.
- with neither (Hermes checkpointed and closed): `immutable=1`, which creates no `-wal`/`-shm`
  (a `mode=ro` reader would); the file's stat is compared before and after, and a read that
  raced a writer is taken again.
- with only one of them (a crash between the two unlinks): a private copy of the file and its
  `-wal` in a temporary folder is opened instead, and removed.
A database that cannot be opened or is not Hermes's (no `sessions`/`messages` table) is an
AgentLogUnreadable; a session whose rows cannot be decoded is read as far as it goes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
import tempfile
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .base import AgentLogUnreadable

DB_NAME = "state.db"
SESSION_COLUMNS = (
    "id", "source", "user_id", "session_key", "chat_id", "chat_type", "thread_id", "display_name",
    "origin_json", "model", "model_config", "parent_session_id", "started_at", "ended_at",
    "end_reason", "message_count", "tool_call_count", "input_tokens", "output_tokens",
    "cache_read_tokens", "cache_write_tokens", "cwd", "git_branch", "git_repo_root",
    "billing_provider", "estimated_cost_usd", "actual_cost_usd", "title", "profile_name",
    "rewind_count", "archived",
)
"""The `sessions` columns read (a column an older Hermes lacks reads as NULL)."""
MESSAGE_COLUMNS = ("id", "role", "content", "tool_call_id", "tool_calls", "tool_name", "timestamp",
                   "token_count", "finish_reason", "active", "compacted")
_RETRIES = 3


def _uri(path: Path, **params: str) -> str:
    return "file:" + urllib.parse.quote(str(path)) + "?" + urllib.parse.urlencode(params)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


@contextlib.contextmanager
def connect(db: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to one state.db (see the module docstring for how it is opened)."""
    try:
        os.stat(db)
        with open(db, "rb"):  # a database of another user's permissions fails here, typed
            pass
    except OSError as exc:
        raise AgentLogUnreadable(f"{db}: {exc.strerror or exc}") from None
    wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
    has_wal, has_shm = wal.exists(), shm.exists()
    copy: str | None = None
    try:
        if has_wal and has_shm:
            uri = _uri(db, mode="ro")
        elif not has_wal and not has_shm:
            uri = _uri(db, mode="ro", immutable="1")
        else:
            copy = tempfile.mkdtemp(prefix="sk-hermes-")
            shutil.copyfile(db, os.path.join(copy, DB_NAME))
            if has_wal:
                shutil.copyfile(wal, os.path.join(copy, DB_NAME + "-wal"))
            uri = _uri(Path(copy) / DB_NAME)
        conn = sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        if copy is not None:
            shutil.rmtree(copy, ignore_errors=True)
        raise AgentLogUnreadable(f"{db}: cannot open Hermes's session database: {exc}") from None
    conn.row_factory = sqlite3.Row
    conn.text_factory = _text  # a message with bytes that are not UTF-8 is read, not refused
    try:
        yield conn
    finally:
        conn.close()
        if copy is not None:
            shutil.rmtree(copy, ignore_errors=True)


def consistent(db: Path, query: Any) -> Any:
    """`query(conn)` on a read-only connection, taken again when the file changed under an
    immutable read (a writer raced it); sqlite errors become AgentLogUnreadable."""
    for attempt in range(_RETRIES):
        before = _stamp(db), _stamp(Path(f"{db}-wal"))
        try:
            with connect(db) as conn:
                result = query(conn)
        except sqlite3.DatabaseError as exc:
            if attempt + 1 < _RETRIES and (_stamp(db), _stamp(Path(f"{db}-wal"))) != before:
                continue
            raise AgentLogUnreadable(f"{db}: not a readable Hermes session database: {exc}") from None
        if before[1] is not None or (_stamp(db), _stamp(Path(f"{db}-wal"))) == before:
            return result
    raise AgentLogUnreadable(f"{db}: changed during {_RETRIES} reads in a row")


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The columns a table has (empty when there is no such table)."""
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _select(wanted: tuple[str, ...], have: set[str], alias: str) -> str:
    return ", ".join(f"{alias}.{c}" if c in have else f"NULL AS {c}" for c in wanted)


def overview(conn: sqlite3.Connection, session_id: str | None = None) -> list[tuple[Any, ...]]:
    """Per session (or the one named): (id, parent_session_id, delegate parent, end_reason,
    archived, max message id, messages, inactive messages, a fingerprint of the session row) —
    the cheap pass a listing makes (one GROUP BY over the messages' session index)."""
    have = columns(conn, "sessions")
    if "id" not in have or "id" not in columns(conn, "messages"):
        raise sqlite3.DatabaseError("no sessions/messages tables")
    mutable = [c for c in ("ended_at", "end_reason", "message_count", "tool_call_count",
                           "input_tokens", "output_tokens", "model", "title", "cwd", "git_branch",
                           "git_repo_root", "rewind_count", "archived", "parent_session_id",
                           "actual_cost_usd", "estimated_cost_usd") if c in have]
    finger = " || '|' || ".join(f"COALESCE(s.{c}, '')" for c in mutable) or "''"
    delegate = ("json_extract(CASE WHEN json_valid(s.model_config) THEN s.model_config END,"
                " '$._delegate_from')" if "model_config" in have else "NULL")
    plain = {c: f"s.{c}" if c in have else "NULL" for c in ("parent_session_id", "end_reason", "archived")}
    where, args = ("WHERE s.id = ?", (session_id,)) if session_id is not None else ("", ())
    inner = "WHERE session_id = ?" if session_id is not None else ""
    sql = (f"SELECT s.id, {plain['parent_session_id']}, {delegate}, {plain['end_reason']}, "
           f"{plain['archived']}, m.top, m.n, m.inactive, {finger} FROM sessions s LEFT JOIN "
           "(SELECT session_id, MAX(id) AS top, COUNT(*) AS n, "
           "SUM(CASE WHEN active = 1 THEN 0 ELSE 1 END) AS inactive FROM messages "
           f"{inner} GROUP BY session_id) m ON m.session_id = s.id {where}")
    return [tuple(row) for row in conn.execute(sql, args * 2 if session_id is not None else ())]


def fingerprint(row: tuple[Any, ...]) -> int:
    """A 60-bit digest of an overview row's counts and session fields (what a stamp compares)."""
    text = f"{row[6] or 0}|{row[7] or 0}|{row[8]}"
    return int(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:15], 16)


def session_row(conn: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    """The `sessions` row of one session, with the id of the session that replaced it after a reset
    (`successor`: the next one of the same session_key), or None when there is none."""
    have = columns(conn, "sessions")
    cols = _select(SESSION_COLUMNS, have, "s")
    successor = ("(SELECT n.id FROM sessions n WHERE n.session_key = s.session_key AND "
                 "n.started_at > s.started_at ORDER BY n.started_at LIMIT 1)"
                 if "session_key" in have else "NULL")
    row = conn.execute(f"SELECT {cols}, {successor} AS successor FROM sessions s WHERE s.id = ?",
                       (session_id,)).fetchone()
    return dict(row) if row is not None else None


def messages(conn: sqlite3.Connection, session_id: str, *, after: int = 0) -> Iterator[dict[str, Any]]:
    """The messages of one session with an id above `after`, in id order."""
    have = columns(conn, "messages")
    cols = _select(MESSAGE_COLUMNS, have, "m")
    for row in conn.execute(f"SELECT {cols} FROM messages m WHERE m.session_id = ? AND m.id > ? "
                            "ORDER BY m.id", (session_id, after)):
        yield dict(row)
