"""The SQL shape of the index: its tables and indexes, the statements that write rows, and
rows to column values and back (JSON text for nested values, 0/1 for flags).

Bump INDEX_VERSION with any change here: an index of another version is rebuilt from the rollouts.
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

import orjson

from .rows import DirMark, FileCheckpoint, SessionRow, ThreadRow, TreeMarks

INDEX_VERSION = 5  # 3: rows as values, store-relative paths, agent column; 4: imported agent files;
# 5: the machine (host, user) of each session
SESSION_COLUMNS = tuple(f.name for f in fields(SessionRow))
THREAD_COLUMNS = tuple(f.name for f in fields(ThreadRow))
FILE_COLUMNS = tuple(f.name for f in fields(FileCheckpoint))
STAMP_COLUMNS = tuple(c for c in FILE_COLUMNS if c != "checkpoint")
JSON_COLUMNS = frozenset({"forked_from", "summary", "companions"})
FLAG_COLUMNS = frozenset({"archived", "damaged", "imported"})
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions({', '.join(SESSION_COLUMNS)}, PRIMARY KEY(session_id));
CREATE TABLE IF NOT EXISTS threads({', '.join(THREAD_COLUMNS)}, PRIMARY KEY(thread_id));
CREATE TABLE IF NOT EXISTS agent_files({', '.join(FILE_COLUMNS)}, PRIMARY KEY(path));
"""
INDEXES = (
    "CREATE INDEX IF NOT EXISTS sessions_thread ON sessions(thread_id, first_seq)",
    "CREATE INDEX IF NOT EXISTS threads_recent ON threads(archived, last_activity DESC, thread_id)",
    "CREATE INDEX IF NOT EXISTS threads_cwd ON threads(cwd, archived, last_activity DESC, thread_id)",
    "CREATE INDEX IF NOT EXISTS threads_repo ON threads(repo_key, archived, last_activity DESC)",
    "CREATE INDEX IF NOT EXISTS agent_files_agent ON agent_files(agent)",
)
INDEX_NAMES = ("sessions_thread", "threads_recent", "threads_cwd", "threads_repo",
                "agent_files_agent")


def _insert(table: str, columns: Sequence[str], *, upsert: bool = False) -> str:
    head = f"INSERT {'' if upsert else 'OR REPLACE '}INTO {table}({','.join(columns)}) " \
           f"VALUES({','.join('?' * len(columns))})"
    if not upsert:
        return head
    return head + f" ON CONFLICT({columns[0]}) DO UPDATE SET " + ",".join(
        f"{c}=excluded.{c}" for c in columns[1:])


TREE_MARKS = "SELECT key, value FROM meta WHERE key IN ('tree', 'tree_generation')"
SAVE_TREE_MARKS = ("INSERT INTO meta(key, value) SELECT 'tree', ? WHERE coalesce((SELECT CAST(value "
                   "AS INTEGER) FROM meta WHERE key = 'tree_generation'), 0) = ? "
                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value")
"""The tree marks, kept only while the generation is the one they were read with (one statement:
a forget committed meanwhile makes it write nothing)."""
KEEP_TREE_MARKS = "INSERT OR REPLACE INTO meta VALUES('tree', ?)"
"""The tree marks, written in the transaction that wrote the rows they vouch for."""
VOID_TREE_MARKS = ("INSERT INTO meta VALUES('tree_generation', '1') ON CONFLICT(key) "
                   "DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                   "DELETE FROM meta WHERE key = 'tree'")
"""Run in the transaction of anything that takes rollouts' rows out of the index."""
UPSERT_SESSION = _insert("sessions", SESSION_COLUMNS, upsert=True)
INSERT_SESSION = _insert("sessions", SESSION_COLUMNS)
INSERT_THREAD = _insert("threads", THREAD_COLUMNS)
INSERT_FILE = _insert("agent_files", FILE_COLUMNS)
ALONE_THREADS = f"""INSERT OR REPLACE INTO threads({','.join(THREAD_COLUMNS)})
SELECT thread_id, agent, CASE WHEN title <> '' THEN title END, cwd, repo_key, branch, started_at,
       nullif(last_activity, ''), archived, session_id, 1, event_count, status IS NOT 'ok',
       forked_from, summary, imported, machine, os_user
FROM sessions"""
"""`threads_of` for every session, when each is the only one of its thread (nothing to group)."""
LONE_THREADS = ALONE_THREADS + " {where} GROUP BY thread_id HAVING count(*) = 1"
"""`threads_of` for every thread (of those `{where}` selects) with one session: that session names
it. Most threads have one; a thread of several goes through `threads_of` itself (`SHARED_SESSIONS`)."""
SHARED_SESSIONS = ("SELECT * FROM sessions WHERE thread_id IN (SELECT thread_id FROM sessions "
                   "{where} GROUP BY thread_id HAVING count(*) > 1)")


def _json(value: Any) -> Any:
    return None if value is None else orjson.dumps(value).decode()


def _column_reader(columns: Sequence[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The SQL values of a row's columns: JSON text, 0/1 for flags (attrgetter: no deep copy)."""
    get = operator.attrgetter(*columns)
    convert = [(i, _json if n in JSON_COLUMNS else int) for i, n in enumerate(columns)
               if n in JSON_COLUMNS or n in FLAG_COLUMNS]

    def values(row: Any) -> tuple[Any, ...]:
        out = list(get(row))
        for i, fn in convert:
            out[i] = fn(out[i])
        return tuple(out)
    return values


_READERS = {SessionRow: _column_reader(SESSION_COLUMNS), ThreadRow: _column_reader(THREAD_COLUMNS),
            FileCheckpoint: _column_reader(FILE_COLUMNS)}


def values_of(row: SessionRow | ThreadRow | FileCheckpoint) -> tuple[Any, ...]:
    return _READERS[type(row)](row)


def decoded(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    for name in JSON_COLUMNS & out.keys():
        if out[name]:
            out[name] = orjson.loads(out[name])
    for name in FLAG_COLUMNS & out.keys():
        out[name] = bool(out[name])
    return out


def file_row(row: dict[str, Any]) -> FileCheckpoint:
    companions = tuple(tuple(c) for c in row.pop("companions") or ())
    return FileCheckpoint(**row, companions=companions)


def marks_text(dirs: dict[str, DirMark]) -> str:
    """Tree marks as the meta table keeps them (JSON text)."""
    return orjson.dumps({k: list(v) for k, v in dirs.items()}).decode()


def marks_of(found: dict[str, str]) -> TreeMarks:
    """Tree marks from the meta values `tree` and `tree_generation`; damaged ones count as none
    (an unreadable generation: marks never saved over it)."""
    try:
        generation = int(found.get("tree_generation", 0))
    except ValueError:
        return TreeMarks(-1, {})
    try:
        dirs = {str(k): (int(v[0]), int(v[1]), bool(v[2]))
                for k, v in orjson.loads(found.get("tree", "{}")).items()}
    except (orjson.JSONDecodeError, TypeError, ValueError, IndexError, AttributeError):
        dirs = {}  # damaged: everything is listed, and the next marks replace them
    return TreeMarks(generation, dirs)
