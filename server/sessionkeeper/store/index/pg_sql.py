"""The SQL shape of the PostgreSQL index: the same rows as state.db (`sql`), one partition per
store (every table's key starts with `store_id`), in tables named by the index version.

Versioning is state.db's: INDEX_VERSION names the tables (`sk_index<N>_…`), so a newer Session
Keeper builds its own tables beside an older one's (each store's partition is rebuilt from its
rollouts, which are the truth) and two versions sharing a server never rebuild each other's;
`sessionkeeper_schema` lists the versions a server holds. Text columns compare bytewise
(COLLATE "C", as SQLite does), so pages and cursors match the other backends'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

from .rows import FileCheckpoint, SessionRow, ThreadRow
from .sql import (
    FILE_COLUMNS,
    FLAG_COLUMNS,
    INDEX_VERSION,
    JSON_COLUMNS,
    SESSION_COLUMNS,
    STAMP_COLUMNS,
    THREAD_COLUMNS,
)

PREFIX = f"sk_index{INDEX_VERSION}_"
META, SESSIONS, THREADS, FILES = (f"{PREFIX}{name}" for name in
                                  ("meta", "sessions", "threads", "agent_files"))
REGISTRY = "sessionkeeper_schema"
_KEYS = {SESSIONS: "session_id", THREADS: "thread_id", FILES: "path"}
__all__ = ["FILE_COLUMNS", "SESSION_COLUMNS", "STAMP_COLUMNS", "THREAD_COLUMNS"]


def _type(name: str, annotation: object) -> str:
    text = str(annotation)
    if name in JSON_COLUMNS:
        return "text"  # JSON text, as in state.db (decoded by orjson, exactly what was written)
    if name in FLAG_COLUMNS:
        return "smallint"
    if text.startswith("int"):
        return "bigint"
    return 'text COLLATE "C"'


def _table(table: str, row: type[SessionRow | ThreadRow | FileCheckpoint]) -> str:
    columns = ", ".join(f"{f.name} {_type(f.name, f.type)}" for f in fields(row))
    return (f'CREATE TABLE IF NOT EXISTS {table}(store_id text COLLATE "C" NOT NULL, {columns}, '
            f"PRIMARY KEY(store_id, {_KEYS[table]}))")


SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {REGISTRY}(name text PRIMARY KEY, version integer NOT NULL, "
    "created_at timestamptz NOT NULL DEFAULT now())",
    f'CREATE TABLE IF NOT EXISTS {META}(store_id text COLLATE "C" NOT NULL, key text NOT NULL, '
    "value text NOT NULL, PRIMARY KEY(store_id, key))",
    _table(SESSIONS, SessionRow),
    _table(THREADS, ThreadRow),
    _table(FILES, FileCheckpoint),
    f"CREATE INDEX IF NOT EXISTS {PREFIX}sessions_thread ON {SESSIONS}(store_id, thread_id, "
    "first_seq)",
    f"CREATE INDEX IF NOT EXISTS {PREFIX}threads_recent ON {THREADS}(store_id, archived, "
    "last_activity DESC NULLS LAST, thread_id DESC)",
    f"CREATE INDEX IF NOT EXISTS {PREFIX}threads_cwd ON {THREADS}(store_id, cwd, archived, "
    "last_activity DESC NULLS LAST, thread_id DESC)",
    f"CREATE INDEX IF NOT EXISTS {PREFIX}threads_repo ON {THREADS}(store_id, repo_key, archived, "
    "last_activity DESC NULLS LAST)",
    f"CREATE INDEX IF NOT EXISTS {PREFIX}files_agent ON {FILES}(store_id, agent)",
    f"CREATE INDEX IF NOT EXISTS {PREFIX}team_recent ON {THREADS}(last_activity DESC NULLS LAST, "
    "thread_id DESC) WHERE imported = 0",
    f"CREATE INDEX IF NOT EXISTS {PREFIX}team_thread ON {THREADS}(thread_id, last_activity DESC "
    "NULLS LAST) WHERE imported = 0",
    f"INSERT INTO {REGISTRY}(name, version) VALUES('index{INDEX_VERSION}', {INDEX_VERSION}) "
    "ON CONFLICT DO NOTHING",
)
"""Run once per server (under an advisory lock: concurrent CREATE IF NOT EXISTS can collide)."""
SCHEMA_LOCK = 0x534B_0001  # pg_advisory_xact_lock key of the schema's creation


def upsert(table: str, columns: Sequence[str]) -> str:
    """INSERT of one row of `table` (store_id first), replacing the row with its key."""
    keyed = ("store_id", *columns)
    key = _KEYS[table]
    return (f"INSERT INTO {table}({', '.join(keyed)}) VALUES({', '.join(['%s'] * len(keyed))}) "
            f"ON CONFLICT(store_id, {key}) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in columns if c != key))


def copy(table: str, columns: Sequence[str]) -> str:
    """COPY of rows of `table` (store_id first): a build's bulk load."""
    return f"COPY {table}(store_id, {', '.join(columns)}) FROM STDIN"


THREAD_SELECT = ", ".join(THREAD_COLUMNS)
"""The columns of a ThreadRow, in field order (no store_id): what `thread_row_of` reads."""
UPSERT_SESSION = upsert(SESSIONS, SESSION_COLUMNS)
UPSERT_FILE = upsert(FILES, FILE_COLUMNS)
INSERT_THREAD = upsert(THREADS, THREAD_COLUMNS)
COPY_SESSIONS = copy(SESSIONS, SESSION_COLUMNS)
COPY_THREADS = copy(THREADS, THREAD_COLUMNS)
STORE_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('sessionkeeper-index:' || %s, 0))"
"""Every write of a store's partition holds it: derived thread rows never interleave."""
GET_META = f"SELECT key, value FROM {META} WHERE store_id = %s AND key = ANY(%s)"
SET_META = (f"INSERT INTO {META}(store_id, key, value) VALUES(%s, %s, %s) "
            "ON CONFLICT(store_id, key) DO UPDATE SET value = excluded.value")
BUMP = (f"INSERT INTO {META}(store_id, key, value) VALUES(%s, %s, '1') ON CONFLICT(store_id, key) "
        f"DO UPDATE SET value = ({META}.value::bigint + 1)::text")
SAVE_TREE_MARKS = (f"INSERT INTO {META}(store_id, key, value) SELECT %s, 'tree', %s "
                   f"WHERE coalesce((SELECT value::bigint FROM {META} WHERE store_id = %s AND "
                   "key = 'tree_generation'), 0) = %s "
                   "ON CONFLICT(store_id, key) DO UPDATE SET value = excluded.value")
DROP_STORE = tuple(f"DELETE FROM {table} WHERE store_id = %s"
                   for table in (SESSIONS, THREADS, FILES, META))
