"""Connecting to a shared PostgreSQL index (psycopg 3), and its errors typed and redacted.

Only the PostgreSQL backend and the sync import this module (psycopg is an optional extra: a
SQLite user never loads it). Every psycopg failure leaves here as one of ours: a lock or a
conflicting writer that did not give way in time is IndexBusy, a full disk IndexFull, anything
else (wrong password, unreachable host, the server gone mid-query) IndexUnavailable — and no
message ever holds the URL's password (`pg_url.redacted`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import IndexBusy, IndexFull, IndexUnavailable
from .pg_url import checked, redacted, shown

if TYPE_CHECKING:
    import psycopg

CONNECT_TIMEOUT_S = 5
"""How long a connection attempt waits for an unreachable server before the command goes on
without the shared index."""
LOCK_TIMEOUT_MS = 2000
"""How long a statement waits for another writer's lock before it is IndexBusy."""
_BUSY = ("40001", "40P01", "55P03", "57014")  # serialization, deadlock, lock timeout, cancelled


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:  # the optional extra is not installed
        raise IndexUnavailable("a PostgreSQL index needs psycopg: pip install "
                               "'sessionkeeper[postgres]'") from exc
    return psycopg


def connect(url: str, *, autocommit: bool = False) -> psycopg.Connection[Any]:
    """A connection to the server `url` names, with short connect and lock timeouts."""
    psycopg = _psycopg()
    url = checked(url)
    try:
        db = psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=autocommit,
                             application_name="sessionkeeper",
                             options=f"-c lock_timeout={LOCK_TIMEOUT_MS}")
    except psycopg.Error as exc:
        raise failure(f"shared index {shown(url)} unreachable", exc, url) from None
    except Exception as exc:  # a malformed URL psycopg refuses: its text redacted
        raise IndexUnavailable(redacted(f"shared index {shown(url)}: {exc}", url)) from None
    return db


def failure(what: str, exc: BaseException, url: str) -> IndexUnavailable:
    """The typed error for a psycopg failure, its text without the password."""
    state = getattr(exc, "sqlstate", None)
    text = redacted(f"{what}: {_first_lines(exc)}", url)
    if state in _BUSY:
        return IndexBusy(text)
    if state == "53100":  # disk_full
        return IndexFull(text)
    return IndexUnavailable(text)


def _first_lines(exc: BaseException) -> str:
    text = " ".join(line.strip() for line in str(exc).strip().splitlines()[:2])
    return text or type(exc).__name__
