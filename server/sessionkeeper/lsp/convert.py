"""The protocol boundary: typed params in (pydantic), JSON results out (PROTOCOL.md shapes).

Imported on the first request, not at start-up (pydantic is not free). Ids are checked with
`sessionkeeper.ids` after the shape is, so a malformed id answers -32010 and a wrong shape -32602.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import ids
from ..errors import InvalidId, SessionKeeperError

INVALID_PARAMS = -32602
TIMELINE_LIMIT = 200
RESERVED_TYPES = frozenset({"session_meta", "snapshot", "lifecycle"})  # not via session/record
TIMELINE_TYPES = frozenset({"session_meta", "lifecycle", "operation", "verifier", "todo",
                            "compacted", "title", "file_change", "model", "permissions"})


class InvalidParams(SessionKeeperError, ValueError):
    """A request's params have the wrong shape."""

    rpc_code = INVALID_PARAMS
    name = "invalid_params"


# ---- params -------------------------------------------------------------------------------------


class Params(BaseModel):
    """Base of every request's params: unknown keys are ignored, ids checked after the shape."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    def check_ids(self) -> None:
        """Raise InvalidId for an id that is not a canonical lowercase UUID (null only if optional)."""
        for name, check in (("thread_id", ids.thread_id), ("session_id", ids.session_id)):
            field = type(self).model_fields.get(name)
            if field is not None and (field.is_required() or getattr(self, name) is not None):
                check(getattr(self, name))


class ListParams(Params):
    """session/list: `all` includes archived threads; `workspace` defaults to the open folder."""

    workspace: str | None = None
    all: bool = False
    cursor: str | None = None
    limit: int = Field(50, ge=1, le=1000)


class ThreadParams(Params):
    """session/show, session/archive, session/unarchive."""

    thread_id: Any


class StartParams(Params):
    """session/start: a new thread in `workspace` (default: the open folder)."""

    workspace: str | None = None
    title: str | None = Field(None, max_length=500)
    permissions: dict[str, Any] | None = None
    model: str | None = None


class RecordParams(Params):
    """session/record: events for the current session, in order."""

    session_id: Any
    events: list[dict[str, Any]] = Field(min_length=1, max_length=10_000)
    durability: Literal["none", "written", "durable"] | None = None


class CheckResumeParams(Params):
    """session/checkResume: a thread, or the latest one of the workspace."""

    thread_id: Any = None
    latest: bool = False
    workspace: str | None = None


class ResumeParams(CheckResumeParams):
    """session/resume: with the user's decision for a drift (None: ask, if the client can)."""

    decision: Literal["continue", "fork", "switch_back", "cancel", "relocate", "export"] | None = None


class ForkParams(Params):
    """session/fork: a new thread from a thread's state at `at_seq` (default: latest)."""

    thread_id: Any
    at_seq: int | None = Field(None, ge=0)
    workspace: str | None = None


class ClearParams(Params):
    """session/clear."""

    session_id: Any
    reason: str = ""


class CompactParams(Params):
    """session/compact."""

    session_id: Any
    summary: str = Field(min_length=1)


class NoParams(Params):
    """session/reindex, session/current: nothing (a client work-done token is honoured)."""

    workDoneToken: str | int | None = None  # noqa: N815 - the LSP spelling


def parse(model: type[Params], raw: Any) -> Any:
    """Validate raw JSON params into `model`; InvalidParams (-32602) or InvalidId (-32010)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InvalidParams(f"params must be an object, not {type(raw).__name__}")
    try:
        params = model.model_validate(raw)
    except ValidationError as exc:
        raise InvalidParams(describe(exc)) from None
    params.check_ids()
    return params


def describe(exc: ValidationError) -> str:
    """One line naming the first bad field and why."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "params"
    return f"{where}: {first['msg']}"


# ---- cursors ------------------------------------------------------------------------------------


def encode_cursor(row: dict[str, Any]) -> str:
    """An opaque cursor after `row`: base64url of [last_activity, thread_id]."""
    raw = orjson.dumps([row.get("last_activity") or "", row["thread_id"]])
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


# ---- results ------------------------------------------------------------------------------------


def thread_summary(row: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """A ThreadSummary from an index row (see recovery.summary.thread_summary)."""
    from ..recovery.summary import thread_summary as summarize

    return summarize(row, **kw)


def session_summary(row: dict[str, Any]) -> dict[str, Any]:
    """A SessionSummary from an index session row."""
    keys = ("session_id", "started_at", "last_activity", "source", "resumed_from", "forked_from",
            "branch", "last_seq", "event_count", "status", "path")
    out = {k: row.get(k) for k in keys}
    out["archived"] = bool(row.get("archived"))
    if isinstance(out["forked_from"], str):
        with contextlib.suppress(orjson.JSONDecodeError):
            out["forked_from"] = orjson.loads(out["forked_from"])
    return out


def _entry_summary(record: dict[str, Any]) -> str:
    kind = record.get("type")
    if kind == "session_meta":
        parent = record.get("resumed_from") or (record.get("forked_from") or {}).get("thread_id")
        how = {"startup": "started", "resume": "resumed from", "fork": "forked from"}.get(
            record.get("source", ""), record.get("source", ""))
        return f"session {how} {parent}" if parent else f"session {how}"
    if kind == "lifecycle":
        text = f"{record.get('source')}: {record.get('reason', '')}".rstrip(": ")
        return text + (f" (decision {record['decision']})" if record.get("decision") else "")
    if kind == "operation":
        return f"{record.get('tool')} {record.get('operation_id')} {record.get('status')}"
    if kind == "verifier":
        score = (f" {record.get('passed')}/{record.get('total')}"
                 if record.get("total") is not None else "")
        return f"{record.get('kind', 'tests')}{score}" + (
            f" at {record['checkpoint']}" if record.get("checkpoint") else "")
    if kind == "todo":
        items = record.get("items") or []
        done = sum(1 for i in items if isinstance(i, dict) and i.get("status") == "done")
        return f"todos {done}/{len(items)} done"
    if kind == "compacted":
        return f"compacted through seq {record.get('through_seq')}"
    if kind == "title":
        return str(record.get("title"))
    if kind == "file_change":
        return f"{record.get('path')} by {record.get('author', 'agent')}"
    if kind == "model":
        return f"model {record.get('name')}"
    if kind == "permissions":
        return f"{record.get('approval_mode')} / {record.get('sandbox_policy')}"
    return ""


def timeline(rollouts: list[Any], *, limit: int = TIMELINE_LIMIT) -> tuple[list[dict], int]:
    """The last `limit` lifecycle/operation/verifier/... entries of a thread, and how many in all."""
    entries: list[dict[str, Any]] = []
    for rollout in rollouts:
        session = (rollout.meta or {}).get("session_id")
        for record in [rollout.meta or {}, *rollout.records]:
            if record.get("type") not in TIMELINE_TYPES:
                continue
            entries.append({"seq": record.get("seq"), "ts": record.get("ts"),
                            "type": record["type"], "session_id": session,
                            "summary": _entry_summary(record)})
    return entries[-limit:], len(entries)


def status(session: Any, *, verdict: str | None, drift: bool) -> dict[str, Any]:
    """The Status of a live session (what the status bar shows)."""
    summary = session.summary()
    return {
        "thread_id": session.thread_id, "session_id": session.session_id,
        "title": summary.get("title"), "branch": summary.get("branch"),
        "verdict": verdict, "drift": drift,
        "todos": summary.get("todos") or {"done": 0, "total": 0},
        "tests": summary.get("tests"), "cost_usd": summary.get("cost_usd") or 0.0,
    }


def acks(items: list[Any]) -> dict[str, Any]:
    """session/record's result."""
    return {"acks": [{"seq": a.seq, "durability": getattr(a.durability, "value", a.durability),
                      "duplicate": a.duplicate} for a in items]}


def drift_message(report: Any) -> str:
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
