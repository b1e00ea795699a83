"""Rows crossing the wire to and from the PostgreSQL index: thread rows decoded from a query's
plain tuples (`thread_row_of`), and a build's bulk load of session and thread rows (`fill`).

A column is stored as state.db stores it (`sql.values_of`: JSON text, 0/1 flags), so a row read
back is the same frozen value as the one written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from . import pg_sql as q
from .rows import SessionRow, ThreadRow, threads_of
from .sql import values_of

_new = object.__new__
_set = object.__setattr__
_loads = orjson.loads


def thread_row_of(values: Sequence[Any]) -> ThreadRow:
    """The ThreadRow of one row of q.THREAD_COLUMNS: the same frozen value as ThreadRow(**…),
    made without its __init__ (which sets each of the 18 fields through object.__setattr__): the
    instance gets its field dict whole, built as one literal (a picker page decodes 50 rows, and
    this is most of a page's time in Python; tests/postgres/test_pg_rows.py checks the order)."""
    (thread_id, agent, title, cwd, repo_key, branch, created_at, last_activity, archived,
     latest_session, session_count, event_count, damaged, forked_from, summary, imported,
     machine, os_user) = values
    row = _new(ThreadRow)
    _set(row, "__dict__", {
        "thread_id": thread_id, "agent": agent, "title": title, "cwd": cwd,
        "repo_key": repo_key, "branch": branch, "created_at": created_at,
        "last_activity": last_activity, "archived": bool(archived),
        "latest_session": latest_session, "session_count": session_count,
        "event_count": event_count, "damaged": bool(damaged),
        "forked_from": None if forked_from is None else _loads(forked_from),
        "summary": None if summary is None else _loads(summary), "imported": bool(imported),
        "machine": machine, "os_user": os_user,
    })
    return row


if tuple(thread_row_of.__code__.co_varnames[1:19]) != q.THREAD_COLUMNS:  # pragma: no cover
    raise ImportError("pg_rows.thread_row_of unpacks columns other than ThreadRow's fields")


def fill(cur: Any, store_id: str, rows: Sequence[SessionRow]) -> None:
    """COPY session rows (the last of a session given twice wins) and their threads."""
    unique = list({r.session_id: r for r in rows}.values())
    with cur.copy(q.COPY_SESSIONS) as copy:
        for row in unique:
            copy.write_row((store_id, *values_of(row)))
    with cur.copy(q.COPY_THREADS) as copy:
        for thread in threads_of(unique):
            copy.write_row((store_id, *values_of(thread)))
