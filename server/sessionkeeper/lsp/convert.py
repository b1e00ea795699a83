"""Small converters from domain values to protocol results (and the list cursor both ways).

The summaries and index rows they convert are imported by the converters that build them, so a
started server loads neither."""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from .. import ids
from ..errors import InvalidId
from ..events import describe
from .live import Live, changed_paths
from .protocol import AckOut, RecordResult, SessionSummary, Status, TimelineEntry
from .rpc import InvalidParams

if TYPE_CHECKING:
    from ..recovery.report import Report
    from ..recovery.summary import ThreadSummary
    from ..recovery.verdicts import Verdict
    from ..session.live import Session
    from ..store.index import SessionRow, ThreadRow
    from ..store.reader import Rollout
    from ..store.recorder import Ack

TIMELINE_LIMIT = 200


def encode_cursor(thread: ThreadSummary) -> str:
    """An opaque cursor after `thread`: base64url of [last_activity, thread_id]."""
    raw = orjson.dumps([thread.last_activity or "", thread.thread_id])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> tuple[str, str] | None:
    """The (last_activity, thread_id) a cursor names; InvalidParams if it is not ours."""
    if cursor is None:
        return None
    try:
        value = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        activity, thread = value
        if not isinstance(activity, str):
            raise ValueError("bad cursor")
        return activity, ids.thread_id(thread)
    except (ValueError, TypeError, binascii.Error, InvalidId):
        raise InvalidParams(f"cursor: not a cursor this server returned: {cursor[:40]!r}") from None


def live_summary(thread: ThreadSummary, session: Session, *,
                 verdict: Verdict | None, live: Live | None = None) -> ThreadSummary:
    """A listed thread as its open session now stands (marked current; live drift when known)."""
    from ..recovery.summary import tests_of, todos_of

    now = session.summary()
    state, reason = (live.state, live.reason) if live else (verdict or thread.state,
                                                           thread.state_reason)
    return dataclasses.replace(
        thread, title=now["title"] or thread.title, branch=now["branch"], model=now["model"],
        todos=todos_of(now), tests=tests_of(now), cost_usd=now["cost_usd"],
        state=state, state_reason=reason, current=True)


def row_summary(row: ThreadRow | None, sessions: Sequence[SessionRow]) -> ThreadSummary:
    """The ThreadSummary of a thread from its index row (derived from its sessions if missing)."""
    from ..recovery.summary import thread_summary
    from ..store.index import threads_of

    return thread_summary(row if row is not None else threads_of(sessions)[0])


def session_summary(row: SessionRow) -> SessionSummary:
    """A SessionSummary from an index session row."""
    return SessionSummary(
        session_id=row.session_id, started_at=row.started_at, last_activity=row.last_activity,
        source=row.source, resumed_from=row.resumed_from, forked_from=row.forked_from,
        branch=row.branch, last_seq=row.last_seq, event_count=row.event_count, status=row.status,
        path=row.path, archived=row.archived)


def timeline(rollouts: Sequence[Rollout], *,
             limit: int = TIMELINE_LIMIT) -> tuple[list[TimelineEntry], int]:
    """The last `limit` noteworthy entries of a thread (events.RULES), and how many in all."""
    entries: list[TimelineEntry] = []
    for rollout in rollouts:
        session = (rollout.meta or {}).get("session_id")
        for record in [rollout.meta or {}, *rollout.records]:
            line = describe(record)
            if line is not None:
                path = record.get("path") if record["type"] == "file_change" else None
                entries.append(TimelineEntry(
                    seq=record.get("seq"), ts=record.get("ts"), type=record["type"],
                    session_id=session, summary=line,
                    path=path if isinstance(path, str) else None,
                    author=str(record.get("author", "agent")) if path else None))
    return entries[-limit:], len(entries)


def status(session: Session, *, verdict: Verdict | None, drift: bool,
           live: Live | None = None) -> Status:
    """The Status of a live session (what the status bar shows), with its live drift if known."""
    from ..recovery.summary import Progress, tests_of, todos_of
    from ..store.index import NATIVE

    summary = session.summary()
    return Status(
        thread_id=session.thread_id, session_id=session.session_id, agent=NATIVE,
        title=summary["title"], branch=summary["branch"], verdict=verdict, drift=drift,
        todos=todos_of(summary) or Progress(done=0, total=0), tests=tests_of(summary),
        cost_usd=summary["cost_usd"] or 0.0,
        state=live.state if live else None, state_reason=live.reason if live else None,
        differences=list(live.differences) if live else [],
        changed_files=changed_paths(live.differences) if live else [],
        invalidated=list(live.invalidated) if live else [],
        workspace=session.workspace)


def acks(items: Sequence[Ack]) -> RecordResult:
    """session/record's result."""
    return RecordResult(acks=[AckOut(seq=a.seq, durability=a.durability,
                                     duplicate=a.duplicate) for a in items])


def drift_message(report: Report) -> str:
    """The text of the drift question: what differs, one line each."""
    title = report.title or report.thread_id
    lines = [f"Session Keeper: “{title}” was recorded in a different environment."]
    for diff in report.differences[:8]:
        lines.append(f"• {diff.kind}: {_short(diff.recorded)} → {_short(diff.current)}"
                     + (f" ({diff.detail})" if diff.detail else ""))
    if len(report.differences) > 8:
        lines.append(f"• … and {len(report.differences) - 8} more")
    if report.switch_back:
        lines.append(f"Switch back: {report.switch_back}")
    return "\n".join(lines)


def _short(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("path") or value.get("repo_root") or value
    text = "—" if value is None else str(value)
    return text if len(text) <= 60 else text[:57] + "…"
