"""Read-only access to Hermes Agent's session database, `state.db` (SQLite, WAL), while Hermes writes.

Nothing is ever opened for writing, created or touched under a Hermes home: even a `mode=ro`
reader of a WAL database writes its read mark into the `-shm` wal-index (and creates `-wal` and
`-shm` when they are missing). So the database is read from a private snapshot: `state.db` and
its `-wal` copied (the kernel's copy, no Python buffers) into a temporary folder of ours and
opened there; SQLite folds the copied WAL in as it would Hermes's own. A copy that raced a
writer (either file's size, mtime or inode changed while it was taken: a checkpoint, a commit) is
taken again. One snapshot per database (and its one read-only connection) stays in this process
while both files' stats stay the same, so an import pass (a listing query, then each changed
session) copies once; when only the WAL grew (a commit, no checkpoint), only the WAL is copied
again. A database
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
from collections.abc import Callable, Iterator, Sequence
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
_SNAPSHOTS: dict[str, _Snapshot] = {}  # db path -> our snapshot of it
_LOCK = threading.RLock()


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
        for known in _SNAPSHOTS.values():
            known.close()
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


class _Snapshot:
    """One private copy of a database, with its one connection and the tables' columns."""

    def __init__(self, source: str, stamps: Stamps, folder: str) -> None:
        self.source, self.stamps, self.folder = source, stamps, folder
        self.conn: sqlite3.Connection | None = None
        self.columns: dict[str, set[str]] = {}

    def connection(self) -> sqlite3.Connection:
        """The snapshot's connection (opened on first use; read-only, so it never checkpoints the
        copied WAL into the copied database, and a newer WAL can be copied over it)."""
        if self.conn is None:
            self.conn = sqlite3.connect(f"file:{os.path.join(self.folder, DB_NAME)}?mode=ro", uri=True,
                                        timeout=5.0, check_same_thread=False)
            self.conn.row_factory = sqlite3.Row
            _OF[id(self.conn)] = self
        return self.conn

    def disconnect(self) -> None:
        """Close the connection (the copy stays)."""
        if self.conn is not None:
            _OF.pop(id(self.conn), None)
            self.conn.close()
            self.conn = None

    def close(self) -> None:
        """Close the connection and remove the copy."""
        self.disconnect()
        _drop(self.folder)

    def take_wal(self, db: Path) -> bool:
        """Copy the source's grown WAL over ours when only it changed (False: copy it all again).

        Hermes appends to its WAL between checkpoints and writes `state.db` only when it
        checkpoints, so a listing after a message copies kilobytes, not the database."""
        now = _stamps(db)
        if now[0] != self.stamps[0] or now[1] is None or self.stamps[1] is None \
                or now[1][2] != self.stamps[1][2] or now[1][0] < self.stamps[1][0]:
            return False
        self.disconnect()
        ours = os.path.join(self.folder, DB_NAME)
        try:
            shutil.copyfile(f"{db}-wal", ours + "-wal")
        except OSError:
            return False
        with contextlib.suppress(FileNotFoundError):
            os.unlink(ours + "-shm")  # our wal-index of the old WAL: rebuilt from the new one
        if _stamps(db) != now:
            return False
        self.stamps, self.columns = now, {}
        return True


_OF: dict[int, _Snapshot] = {}  # id(connection) -> its snapshot (for the columns cache)


def snapshot(db: Path) -> _Snapshot:
    """Our snapshot of one database, copied again when the database or its WAL changed."""
    key = str(db)
    with _LOCK:
        known = _SNAPSHOTS.get(key)
        if known is not None and (known.stamps == _stamps(db) or known.take_wal(db)):
            return known
        made = _Snapshot(key, *_copy(db))
        if known is not None:
            known.close()
        _SNAPSHOTS[key] = made
        return made


@contextlib.contextmanager
def connect(db: Path) -> Iterator[sqlite3.Connection]:
    """The connection to our snapshot of one state.db (see the module docstring); one query at a time."""
    with _LOCK:
        try:
            with open(db, "rb"):  # a database of another user's permissions fails here, typed
                pass
            conn = snapshot(db).connection()
        except (OSError, sqlite3.Error) as exc:
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise AgentLogUnreadable(f"{db}: cannot read Hermes's session database: {detail}") from None
        yield conn


def consistent(db: Path, query: Callable[[sqlite3.Connection], T]) -> T:
    """`query(conn)` on a snapshot of the database; sqlite errors become AgentLogUnreadable."""
    try:
        with connect(db) as conn:
            return query(conn)
    except sqlite3.DatabaseError as exc:
        raise AgentLogUnreadable(f"{db}: not a readable Hermes session database: {exc}") from None


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The columns a table has (empty when there is no such table), once per snapshot."""
    known = _OF.get(id(conn))
    cache = known.columns if known is not None else {}
    if table not in cache:
        cache[table] = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    return cache[table]


def _rows(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...], *,
          plain: bool = False) -> list[Any]:
    """All rows of a query (`plain`: as tuples, not sqlite3.Row); text that is not UTF-8 is read
    with U+FFFD (a second pass, only then)."""
    for factory in (str, _text):
        conn.text_factory = factory
        cursor = conn.cursor()
        if plain:
            cursor.row_factory = None
        try:
            return cursor.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc) or factory is _text:
                raise
        finally:
            conn.text_factory = str
    raise AssertionError("not reached")


def _select(wanted: tuple[str, ...], have: set[str], alias: str) -> str:
    return ", ".join(f"{alias}.{c}" if c in have else f"NULL AS {c}" for c in wanted)


MUTABLE = ("ended_at", "end_reason", "message_count", "tool_call_count", "input_tokens",
           "output_tokens", "model", "title", "cwd", "git_branch", "git_repo_root", "rewind_count",
           "archived", "parent_session_id", "actual_cost_usd", "estimated_cost_usd")
"""The `sessions` columns whose change makes a session be read again."""
_LISTED: dict[str, dict[str, Any]] = {}  # db path -> what its last listing counted (see overview)


def _sessions(conn: sqlite3.Connection, session_id: str | None,
              ids: Sequence[str] = ()) -> list[tuple[Any, ...]]:
    have = columns(conn, "sessions")
    if "id" not in have or "id" not in columns(conn, "messages"):
        raise sqlite3.DatabaseError("no sessions/messages tables")
    delegate = ("CASE WHEN instr(s.model_config, '\"_delegate_from\"') AND json_valid(s.model_config)"
                " THEN json_extract(s.model_config, '$._delegate_from') END"
                if "model_config" in have else "NULL")  # parsed only where it can say something
    plain = [f"s.{c}" if c in have else "NULL" for c in ("parent_session_id", "end_reason", "archived")]
    mutable = ", ".join(f"s.{c}" if c in have else "NULL" for c in MUTABLE)
    sql = f"SELECT s.id, {plain[0]}, {delegate}, {plain[1]}, {plain[2]}, {mutable} FROM sessions s"
    if ids:
        return _rows(conn, f"{sql} WHERE s.id IN ({_marks(ids)})", tuple(ids), plain=True)
    return _rows(conn, sql + (" WHERE s.id = ?" if session_id is not None else ""),
                 (session_id,) if session_id is not None else (), plain=True)


def _marks(ids: Sequence[str]) -> str:
    return ", ".join("?" * len(ids))


def _counts(conn: sqlite3.Connection, where: str = "", args: tuple[Any, ...] = ()) -> dict[str, list[Any]]:
    """session id -> [highest message id, messages, inactive messages] of the messages selected."""
    sql = ("SELECT session_id, MAX(id), COUNT(*), TOTAL(active <> 1) FROM messages "
           f"{where} GROUP BY session_id")
    return {row[0]: [row[1], row[2], int(row[3])] for row in _rows(conn, sql, args, plain=True)}


def overview(conn: sqlite3.Connection, session_id: str | None = None) -> list[tuple[Any, ...]]:
    """Per session (or the one named): (id, parent_session_id, delegate parent, end_reason,
    archived, max message id, messages, inactive messages, the session row's changing fields).

    The cheap pass a listing makes. A session named is counted exactly. For all of them, this
    process remembers the last listing of the database (while its inode holds): only messages
    above the highest id it saw are counted, plus, exactly, every session whose row changed (a
    rewind, a compaction, an end); the first listing counts every message (one GROUP BY)."""
    rows = _sessions(conn, session_id)
    if session_id is not None:
        counts = _counts(conn, "WHERE session_id = ?", (session_id,))
    else:
        counts = _listed_counts(conn, rows)
    out = []
    for row in rows:
        top, n, inactive = counts.get(row[0]) or (None, 0, 0)
        out.append((*row[:5], top, n, inactive, row[5:]))
    return out


def overviews(conn: sqlite3.Connection, session_ids: Sequence[str]) -> dict[str, tuple[Any, ...]]:
    """overview(conn, id) of each session named (at most BULK), exactly counted, in two queries:
    session id -> its row (a session that is not there is absent)."""
    rows = _sessions(conn, None, session_ids) if session_ids else []
    counts = _counts(conn, f"WHERE session_id IN ({_marks(session_ids)})", tuple(session_ids)) \
        if session_ids else {}
    out = {}
    for row in rows:
        top, n, inactive = counts.get(row[0]) or (None, 0, 0)
        out[row[0]] = (*row[:5], top, n, inactive, row[5:])
    return out


BULK = 200
"""The most sessions one bulk query names (well under SQLite's 999 parameters)."""


def _listed_counts(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> dict[str, list[Any]]:
    known = _OF.get(id(conn))
    key, inode = (known.source, known.stamps[0][2] if known.stamps[0] else None) if known else ("", None)
    last = _LISTED.get(key)
    fields = {row[0]: row[5:] for row in rows}
    if last is None or last["inode"] != inode or not key:
        counts = _counts(conn)
    else:
        counts = {sid: list(c) for sid, c in last["counts"].items() if sid in fields}
        for sid, (top, n, inactive) in _counts(conn, "WHERE id > ?", (last["top"],)).items():
            mine = counts.setdefault(sid, [None, 0, 0])
            mine[0], mine[1], mine[2] = top, mine[1] + n, mine[2] + inactive
        changed = [sid for sid, f in fields.items() if last["fields"].get(sid) != f]
        for start in range(0, len(changed), 500):
            part = changed[start:start + 500]
            exact = _counts(conn, f"WHERE session_id IN ({', '.join('?' * len(part))})", tuple(part))
            for sid in part:
                counts[sid] = exact.get(sid, [None, 0, 0])
    if key:
        top = max((c[0] for c in counts.values() if c[0] is not None), default=0)
        _LISTED[key] = {"inode": inode, "top": top, "counts": counts, "fields": fields}
    return counts


def fingerprint(row: tuple[Any, ...]) -> int:
    """A 60-bit digest of an overview row's counts and session fields (what a stamp compares)."""
    key = (row[6] or 0, row[7] or 0, row[8])
    known = _FINGERS.get(row[0])
    if known is not None and known[0] == key:
        return known[1]
    text = repr(key)
    value = int(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:15], 16)
    if len(_FINGERS) > 100_000:
        _FINGERS.clear()
    _FINGERS[row[0]] = (key, value)
    return value


_FINGERS: dict[Any, tuple[Any, int]] = {}  # session id -> (what was digested, its digest)


def session_row(conn: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    """The `sessions` row of one session, with the id of the session that replaced it after a reset
    (`successor`: the next one of the same session_key), or None when there is none."""
    have = columns(conn, "sessions")
    cols = _select(SESSION_COLUMNS, have, "s")
    successor = ("(SELECT n.id FROM sessions n WHERE n.session_key = s.session_key AND "
                 "n.started_at > s.started_at ORDER BY n.started_at LIMIT 1)"
                 if "session_key" in have else "NULL")
    found = _rows(conn, f"SELECT {cols}, {successor} AS successor FROM sessions s WHERE s.id = ?",
                  (session_id,))
    return dict(found[0]) if found else None


def session_rows(conn: sqlite3.Connection, session_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """session_row() of each session named (at most BULK) in one query: id -> its row."""
    if not session_ids:
        return {}
    have = columns(conn, "sessions")
    cols = _select(SESSION_COLUMNS, have, "s")
    successor = ("(SELECT n.id FROM sessions n WHERE n.session_key = s.session_key AND "
                 "n.started_at > s.started_at ORDER BY n.started_at LIMIT 1)"
                 if "session_key" in have else "NULL")
    found = _rows(conn, f"SELECT {cols}, {successor} AS successor FROM sessions s "
                  f"WHERE s.id IN ({_marks(session_ids)})", tuple(session_ids))
    return {row["id"]: dict(row) for row in found}


def messages_of(conn: sqlite3.Connection, session_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Every message of each session named (at most BULK) in one query: id -> its messages in id
    order (what `messages(conn, id)` yields, for each)."""
    if not session_ids:
        return {}
    have = columns(conn, "messages")
    names = MESSAGE_COLUMNS
    found = _rows(conn, f"SELECT m.session_id, {_select(names, have, 'm')} FROM messages m "
                  f"WHERE m.session_id IN ({_marks(session_ids)}) ORDER BY m.session_id, m.id",
                  tuple(session_ids), plain=True)
    out: dict[str, list[dict[str, Any]]] = {sid: [] for sid in session_ids}
    for values in found:
        mine = out.get(values[0])
        if mine is not None:
            mine.append(dict(zip(names, values[1:], strict=True)))
    return out


def messages(conn: sqlite3.Connection, session_id: str, *, after: int = 0) -> Iterator[dict[str, Any]]:
    """The messages of one session with an id above `after`, in id order."""
    have = columns(conn, "messages")
    cols = _select(MESSAGE_COLUMNS, have, "m")
    for row in _rows(conn, f"SELECT {cols} FROM messages m WHERE m.session_id = ? AND m.id > ? "
                     "ORDER BY m.id", (session_id, after)):
        yield dict(row)
