"""Read-only access to Hermes Agent's session database, `state.db` (SQLite, WAL), while Hermes writes.

Nothing is ever opened for writing, created or touched under a Hermes home: even a `mode=ro`
reader of a WAL database writes its read mark into the `-shm` wal-index (and creates `-wal` and
`-shm` when they are missing). So the database is read from a private snapshot: `state.db` and
its `-wal` copied (the kernel's copy, no Python buffers) into a temporary folder of ours and
opened there; SQLite folds the copied WAL in as it would Hermes's own. A copy that raced a
writer (either file's size, mtime or inode changed while it was taken: a checkpoint, a commit) is
taken again. One snapshot per database stays in this process while both files' stats stay the
same, so an import pass (a listing query, then each changed session) copies once. A database
that cannot be opened or is not Hermes's (no `sessions`/`messages` table) is an
AgentLogUnreadable; text that is not UTF-8 is read with replacement characters.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from .base import AgentLogUnreadable

T = TypeVar("T")
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
Stamps = tuple["tuple[int, int, int] | None", "tuple[int, int, int] | None"]
_SNAPSHOTS: dict[str, tuple[Stamps, str]] = {}  # db path -> (its stamps, our snapshot folder)
_LOCK = threading.Lock()


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def _stamps(db: Path) -> Stamps:
    return _stamp(db), _stamp(Path(f"{db}-wal"))


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _drop(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)


@atexit.register
def _drop_all() -> None:
    with _LOCK:
        for _, folder in _SNAPSHOTS.values():
            _drop(folder)
        _SNAPSHOTS.clear()


def _copy(db: Path) -> tuple[Stamps, str]:
    """A consistent private copy of the database and its WAL: (the source's stamps, the folder)."""
    for _ in range(_RETRIES):
        before = _stamps(db)
        folder = tempfile.mkdtemp(prefix="sk-hermes-")
        try:
            shutil.copyfile(db, os.path.join(folder, DB_NAME))
            if before[1] is not None:
                with contextlib.suppress(FileNotFoundError):  # checkpointed away meanwhile
                    shutil.copyfile(f"{db}-wal", os.path.join(folder, DB_NAME + "-wal"))
        except OSError:
            _drop(folder)
            raise
        if _stamps(db) == before:
            return before, folder
        _drop(folder)
    raise AgentLogUnreadable(f"{db}: changed during {_RETRIES} copies in a row")


def snapshot(db: Path) -> str:
    """Our snapshot folder of one database, copied again when the database or its WAL changed."""
    key = str(db)
    with _LOCK:
        known = _SNAPSHOTS.get(key)
        if known is not None and known[0] == _stamps(db):
            return known[1]
        made = _copy(db)
        if known is not None:
            _drop(known[1])
        _SNAPSHOTS[key] = made
        return made[1]


@contextlib.contextmanager
def connect(db: Path) -> Iterator[sqlite3.Connection]:
    """A connection to our snapshot of one state.db (see the module docstring)."""
    try:
        with open(db, "rb"):  # a database of another user's permissions fails here, typed
            pass
        folder = snapshot(db)
        conn = sqlite3.connect(os.path.join(folder, DB_NAME), timeout=5.0, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise AgentLogUnreadable(f"{db}: cannot read Hermes's session database: {detail}") from None
    conn.row_factory = sqlite3.Row
    conn.text_factory = _text  # a message with bytes that are not UTF-8 is read, not refused
    try:
        yield conn
    finally:
        conn.close()


def consistent(db: Path, query: Callable[[sqlite3.Connection], T]) -> T:
    """`query(conn)` on a snapshot of the database; sqlite errors become AgentLogUnreadable."""
    try:
        with connect(db) as conn:
            return query(conn)
    except sqlite3.DatabaseError as exc:
        raise AgentLogUnreadable(f"{db}: not a readable Hermes session database: {exc}") from None


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
