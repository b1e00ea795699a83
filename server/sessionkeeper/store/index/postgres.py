"""The PostgreSQL index backend: a store's index kept on a shared server, one partition per store.

This module opens, builds and sets aside a store's partition (`PostgresBackend`), creating the
schema (`pg_sql.SCHEMA`) on a server that has none; the partition's reads and writes are
`pg_index.PostgresIndex`, its rows' coding `pg_rows`. A partition exists once built (its `version`
and `incarnation` meta rows); `set_aside` drops it and `is_current` turns False on every
connection that saw it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...errors import IndexUnavailable
from . import pg_sql as q
from .pg_connection import connect, failure
from .pg_index import PostgresIndex
from .pg_rows import fill
from .pg_url import shown
from .rows import SessionRow
from .sql import INDEX_VERSION

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresBackend", "PostgresIndex"]


class PostgresBackend:
    """A store's partition of the index on the PostgreSQL server `url`."""

    def __init__(self, url: str, *, store_id: str) -> None:
        self.url = url
        self.store_id = store_id

    def _connect(self) -> psycopg.Connection[Any]:
        import psycopg

        db = connect(self.url, autocommit=True)  # writes open their own transactions
        try:
            with db.transaction():
                exists = db.execute("SELECT to_regclass(%s) IS NOT NULL",
                                    (q.THREADS,)).fetchone()
                if not (exists and exists[0]):
                    db.execute("SELECT pg_advisory_xact_lock(%s)", (q.SCHEMA_LOCK,))
                    for statement in q.SCHEMA:
                        db.execute(statement)
        except psycopg.Error as exc:
            db.close()
            raise failure(f"shared index {shown(self.url)}: schema", exc, self.url) from None
        return db

    def open(self) -> PostgresIndex:
        """The store's partition; IndexUnavailable when it was never built (or set aside)."""
        import psycopg

        db = self._connect()
        try:
            found = dict(db.execute(q.GET_META, (self.store_id, ["version", "incarnation"]))
                         .fetchall())
        except psycopg.Error as exc:
            db.close()
            raise failure(f"shared index {shown(self.url)}: open", exc, self.url) from None
        if found.get("version") != str(INDEX_VERSION) or "incarnation" not in found:
            db.close()
            raise IndexUnavailable("index missing" if not found else
                                   f"index version {found.get('version')} != {INDEX_VERSION}")
        return PostgresIndex(db, url=self.url, store_id=self.store_id,
                             incarnation=found["incarnation"])

    def build(self, rows: Sequence[SessionRow]) -> PostgresIndex:
        """A new partition holding `rows`, in one transaction (readers see the old or the new)."""
        import psycopg

        db = self._connect()
        incarnation = uuid.uuid4().hex
        try:
            with db.transaction(), db.cursor() as cur:
                cur.execute(q.STORE_LOCK, (self.store_id,))
                for statement in q.DROP_STORE:
                    cur.execute(statement, (self.store_id,))
                for key, value in (("version", str(INDEX_VERSION)), ("incarnation", incarnation)):
                    cur.execute(q.SET_META, (self.store_id, key, value))
                fill(cur, self.store_id, rows)
        except psycopg.Error as exc:
            db.close()
            raise failure(f"shared index {shown(self.url)}: build", exc, self.url) from None
        return PostgresIndex(db, url=self.url, store_id=self.store_id, incarnation=incarnation)

    def set_aside(self) -> None:
        """Drop the store's partition (it is derived: a build makes it again from the rollouts)."""
        import psycopg

        db = self._connect()
        try:
            with db.transaction(), db.cursor() as cur:
                cur.execute(q.STORE_LOCK, (self.store_id,))
                for statement in q.DROP_STORE:
                    cur.execute(statement, (self.store_id,))
        except psycopg.Error as exc:
            raise failure(f"shared index {shown(self.url)}: set aside", exc, self.url) from None
        finally:
            db.close()
