"""The index's rows: frozen values every index backend stores and returns.

A session row says what the index knows about one rollout (a session); thread rows are derived
from a thread's session rows (`threads_of`; the SQLite backend derives a thread of one session in
SQL, to the same values), never stored on their own by a caller. An agent's own
file (a Codex rollout, a Claude Code transcript) is imported as at most one session row
(`imported`), with a `FileCheckpoint` saying how far it was read; a sub-agent transcript is a
session of its parent's thread (`source` "subagent") that never names the thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

NATIVE = "native"
"""The agent of threads Session Keeper itself recorded."""


@dataclass(frozen=True, kw_only=True)
class SessionRow:
    """One session (one rollout file) as the index knows it."""

    session_id: str
    thread_id: str
    path: str  # store-relative for native rollouts; absolute for agents' own files
    agent: str = NATIVE
    archived: bool = False
    started_at: str | None = None
    last_activity: str | None = None
    resumed_from: str | None = None
    forked_from: dict[str, Any] | None = None
    source: str = "startup"
    cwd: str | None = None
    repo_key: str | None = None  # the repository's first root commit
    branch: str | None = None
    title: str | None = None
    first_seq: int = 0
    last_seq: int = 0
    event_count: int = 0
    size: int = 0
    inode: int | None = None
    status: str = "ok"  # ok | damaged
    summary: dict[str, Any] | None = None  # the status summary of the newest snapshot
    imported: bool = False  # read from an agent's own file (it has a FileCheckpoint)
    machine: str | None = None  # the host it was recorded on (session_meta.machine)
    os_user: str | None = None  # the user who recorded it there


_SESSION_FIELDS = frozenset(SessionRow.__dataclass_fields__)


def session_row_of(values: dict[str, Any]) -> SessionRow:
    """The SessionRow holding `values` (one per field, in field order): the same frozen value as
    `SessionRow(**values)`, made without its `__init__`, which sets each of the 23 fields through
    `object.__setattr__` (3.7 us here; this takes 0.5 us, and a rebuild makes one per rollout)."""
    if values.keys() != _SESSION_FIELDS:
        raise TypeError(f"SessionRow fields missing or unknown: "
                        f"{sorted(values.keys() ^ _SESSION_FIELDS)}")
    row = object.__new__(SessionRow)
    row.__dict__.update(values)
    return row


SUBAGENT = "subagent"
"""The `source` of a sub-agent transcript's session row: part of its parent's thread."""


@dataclass(frozen=True, kw_only=True)
class FileCheckpoint:
    """How far one agent file was imported: its stat then, the row it made, the reader's checkpoint.

    A listing stats the file and compares size, mtime_ns, inode and the companions' stats with
    these: equal means nothing to read. `checkpoint` is the reader's own state (JSON text,
    redacted), read back only for a file that changed.
    """

    path: str  # absolute: the agent's file
    agent: str
    root: str  # the agent root it was found under
    kind: str = "session"  # session | subagent
    parent: str | None = None  # subagent: the parent session's file stem
    archived: bool = False
    size: int
    mtime_ns: int
    inode: int
    companions: tuple[tuple[str, int, int], ...] = ()  # (path, size, mtime_ns) of files read with it
    session_id: str | None = None  # the session row it made (None: no thread in the file)
    checkpoint: str | None = None  # None when listed without it


@dataclass(frozen=True, kw_only=True)
class ThreadRow:
    """One thread: derived from its sessions; the newest session names it."""

    thread_id: str
    agent: str = NATIVE
    title: str | None = None
    cwd: str | None = None
    repo_key: str | None = None
    branch: str | None = None
    created_at: str | None = None
    last_activity: str | None = None
    archived: bool = False
    latest_session: str | None = None
    session_count: int = 0
    event_count: int = 0
    damaged: bool = False
    forked_from: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None
    imported: bool = False
    machine: str | None = None  # where its newest session was recorded
    os_user: str | None = None


@dataclass(frozen=True, kw_only=True)
class ListQuery:
    """Which threads to list: filters, archived ones too, and a page."""

    cwd: str | None = None
    repo_key: str | None = None
    agent: str | None = None
    agents: tuple[str, ...] | None = None  # imported threads only of these agents (None: any)
    machine: str | None = None  # threads whose newest session was recorded on this machine
    include_archived: bool = False
    archived_only: bool = False  # only archived threads (include_archived is then implied)
    limit: int = 50
    cursor: tuple[str, str] | None = None  # (last_activity, thread_id) of the previous page's end


MAX_LIMIT = 1001
"""The most threads one listing returns: the protocol's largest page (1,000) and the one more a
page reads to know whether a next page exists."""


DirMark = tuple[int, int, bool]
"""A directory of the rollout tree as a reconcile listed it: (inode, ctime_ns, trusted)."""


class TreeMarks(NamedTuple):  # not a dataclass: cheaper at import (issue 13)
    """The rollout tree's directories as the last reconcile listed them (`dirs`: store-relative
    path -> DirMark); `generation` moves on whenever rows of rollouts leave the index (a forget,
    a rebuild), which voids the marks and any taken before it."""

    generation: int
    dirs: dict[str, DirMark]


NO_MARKS = TreeMarks(-1, {})
"""The marks of an index that keeps none (every directory is listed; saving is refused)."""


def thread_order(row: SessionRow) -> tuple[int, str, str]:
    """Sessions of a thread in seq order (seq is thread-wide; clocks can step back)."""
    return (row.first_seq, row.started_at or "", row.session_id)


def threads_of(sessions: Iterable[SessionRow]) -> list[ThreadRow]:
    """Thread rows derived from session rows: the newest session (by seq) names the thread."""
    by_thread: dict[str, list[SessionRow]] = {}
    for row in sessions:
        by_thread.setdefault(row.thread_id, []).append(row)
    return [lone_thread(rows[0]) if len(rows) == 1 else thread_of(thread, rows)
            for thread, rows in by_thread.items()]


def thread_of(thread: str, rows: list[SessionRow]) -> ThreadRow:
    """The row of `thread` from its sessions (sorted here in seq order)."""
    rows.sort(key=thread_order)
    named = [r for r in rows if r.source != SUBAGENT] or rows  # a sub-agent never names it
    latest = named[-1]
    titled = [r.title for r in named if r.title]
    return ThreadRow(
        thread_id=thread, agent=latest.agent, title=titled[-1] if titled else None,
        cwd=latest.cwd, repo_key=latest.repo_key, branch=latest.branch,
        created_at=rows[0].started_at,
        last_activity=max((r.last_activity or "") for r in rows) or None,
        archived=latest.archived, latest_session=latest.session_id, session_count=len(rows),
        event_count=sum(r.event_count for r in rows),
        damaged=any(r.status != "ok" for r in rows), forked_from=named[0].forked_from,
        summary=latest.summary, imported=latest.imported, machine=latest.machine,
        os_user=latest.os_user,
    )


def lone_thread(row: SessionRow) -> ThreadRow:
    """`thread_of` a thread whose only session is `row` (nothing to sort or compare)."""
    return ThreadRow(
        thread_id=row.thread_id, agent=row.agent, title=row.title or None, cwd=row.cwd,
        repo_key=row.repo_key, branch=row.branch, created_at=row.started_at,
        last_activity=row.last_activity or None, archived=row.archived,
        latest_session=row.session_id, session_count=1, event_count=row.event_count,
        damaged=row.status != "ok", forked_from=row.forked_from, summary=row.summary,
        imported=row.imported, machine=row.machine, os_user=row.os_user,
    )


def matches(row: ThreadRow, query: ListQuery) -> bool:
    """True when a thread row passes the query's filters (not its page)."""
    return ((row.archived if query.archived_only else query.include_archived or not row.archived)
            and (query.cwd is None or row.cwd == query.cwd)
            and (query.repo_key is None or row.repo_key == query.repo_key)
            and (query.agent is None or row.agent == query.agent)
            and (query.machine is None or row.machine == query.machine)
            and (query.agents is None or not row.imported or row.agent in query.agents))


def newest_first(row: ThreadRow) -> tuple[str, str]:
    """The listing order key (descending): last activity, then thread id."""
    return (row.last_activity or "", row.thread_id)


def after_cursor(row: ThreadRow, cursor: tuple[str, str] | None) -> bool:
    """True when a row comes after the cursor in newest-first order."""
    return cursor is None or newest_first(row) < cursor
