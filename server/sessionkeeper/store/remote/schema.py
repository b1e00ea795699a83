"""The shared server's own tables (records, blobs, leases), created and migrated by version.

`MIGRATIONS[n]` brings the sync tables from version n to n + 1; the version reached is kept in
`sessionkeeper_schema` (row `sync`), which the index tables share (rows `index<N>`). Migrations run
in one transaction under an advisory lock, so two machines connecting at once migrate once. A
server whose sync version is newer than this Session Keeper's is refused (IndexUnavailable):
an older build never writes tables it does not know.

Invariants of the data: a record is the exact bytes of one rollout line, keyed by (session, seq),
with the CRC-32 of those bytes; it is inserted once and never changed. A blob is content-addressed
(sha256 of its content) and stored zstd-compressed with the CRC-32 of the stored bytes.
"""

from __future__ import annotations

from typing import Any

from ...errors import IndexUnavailable
from ..index.pg_sql import REGISTRY, SCHEMA_LOCK

RECORDS, BLOBS, LEASES, LEASE_LOG = "sk_records", "sk_blobs", "sk_leases", "sk_lease_log"
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # 0 -> 1
        f'CREATE TABLE {RECORDS}(session_id text COLLATE "C" NOT NULL, seq bigint NOT NULL, '
        'thread_id text COLLATE "C" NOT NULL, line bytea NOT NULL, crc bigint NOT NULL, '
        "PRIMARY KEY(session_id, seq))",
        f"CREATE INDEX {RECORDS}_thread ON {RECORDS}(thread_id)",
        f'CREATE TABLE {BLOBS}(key text COLLATE "C" PRIMARY KEY, data bytea NOT NULL, '
        "size bigint NOT NULL, crc bigint NOT NULL)",
        f'CREATE TABLE {LEASES}(thread_id text COLLATE "C" PRIMARY KEY, holder text NOT NULL, '
        "machine text NOT NULL, os_user text, pid integer NOT NULL, "
        "acquired_at timestamptz NOT NULL, expires_at timestamptz NOT NULL)",
        f'CREATE TABLE {LEASE_LOG}(id bigserial PRIMARY KEY, thread_id text COLLATE "C" NOT NULL, '
        "event text NOT NULL, holder text NOT NULL, machine text NOT NULL, os_user text, "
        "previous_machine text, at timestamptz NOT NULL DEFAULT now())",
    ),
)
VERSION = len(MIGRATIONS)


def ensure(db: Any) -> None:
    """Create or migrate the sync tables on the server `db` (a psycopg connection, autocommit)."""
    found = _version(db)
    if found == VERSION:
        return
    with db.transaction():
        db.execute(f"CREATE TABLE IF NOT EXISTS {REGISTRY}(name text PRIMARY KEY, version integer "
                   "NOT NULL, created_at timestamptz NOT NULL DEFAULT now())")
        db.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        found = _version(db) or 0  # again, under the lock: another machine may have migrated
        if found > VERSION:
            raise IndexUnavailable(f"the shared server's sync tables are version {found}, newer "
                                   f"than this Session Keeper's {VERSION}: upgrade it")
        for step in MIGRATIONS[found:]:
            for statement in step:
                db.execute(statement)
        db.execute(f"INSERT INTO {REGISTRY}(name, version) VALUES('sync', %s) ON CONFLICT(name) "
                   "DO UPDATE SET version = excluded.version", (VERSION,))


def _version(db: Any) -> int | None:
    exists = db.execute("SELECT to_regclass(%s) IS NOT NULL", (REGISTRY,)).fetchone()
    if not (exists and exists[0]):
        return None
    row = db.execute(f"SELECT version FROM {REGISTRY} WHERE name = 'sync'").fetchone()
    if row is None:
        return None
    if row[0] > VERSION:
        raise IndexUnavailable(f"the shared server's sync tables are version {row[0]}, newer "
                               f"than this Session Keeper's {VERSION}: upgrade it")
    return int(row[0])
