"""The rollout record vocabulary: schema version, durability, sources, and one rule per type.

Stored records are plain dicts (`{"seq", "ts", "type", ...}`): reading, folding and listing build
no objects and import no schema. The shape of each record type is defined once, in `schema/`
(dataclasses, imported only to build or validate records); `RULES` here says, for every record
type, who may write it and how it appears in a timeline — a test checks that every record type
of the schema has exactly one rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, get_args

import orjson

from .errors import InvalidEvent

SCHEMA_VERSION = 2
"""Version written to every `session_meta`. 1 = pre-release draft (nested `payload`, no checksum)."""

Record = dict[str, Any]
"""A stored record as read from a rollout."""

STRICT: dict[str, Any] = {"extra": "forbid", "strict": True}
"""The pydantic config of every record dataclass: no coercion, no unknown fields. Field
docstrings are read only for the JSON Schema (`validate.json_schema`): reading them means reading
the source of every class, 3/4 of building the validator (issue 13)."""


class Durability(str, Enum):
    """How far a record must get before `record()` returns."""

    NONE = "none"  # buffered in the process; lost on a kill
    WRITTEN = "written"  # in the kernel; survives a process kill
    DURABLE = "durable"  # fsynced; survives power loss if the disk honours flushes


Source = Literal[
    "startup", "resume", "clear", "compact", "fork", "idle_reset", "archive", "unarchive", "shutdown",
    "rewind",
]
"""Why a lifecycle transition happened."""
SOURCES: tuple[str, ...] = get_args(Source)

ApprovalMode = Literal["untrusted", "on-request", "on-failure", "never",
                       "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
"""Approval modes of Session Keeper and Codex (first four) and Claude Code's permission modes."""
SandboxPolicy = Literal["read-only", "workspace-write", "danger-full-access"]
Author = Literal["agent", "user", "external", "rewind"]
"""Who wrote a file version; `rewind` versions are written by Session Keeper's rewind only."""
Change = Literal["create", "modify", "delete", "seen"]
"""What a file_change did; `seen` is no change: the content found before the session changed it."""
RewindAction = Literal["restore", "delete", "unchanged", "refused", "unavailable"]
"""What a rewind plans for a file."""
RewindOutcome = Literal["written", "deleted", "unchanged", "skipped", "stale", "failed"]
"""What a rewind did to a file."""
Content = Literal["stored", "binary", "too_large", "outside_workspace", "secret_file", "not_a_file"]
"""What was kept of a version's content: `stored` (a blob), or why only its hash was kept."""
DEFAULT_APPROVAL: ApprovalMode = "on-request"
DEFAULT_SANDBOX: SandboxPolicy = "workspace-write"
DEFAULT_TOOLS = "default"
PERMISSION_FIELDS = ("approval_mode", "sandbox_policy", "tool_profile")


# ---- the workspace values a session_meta carries ----------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RepoIdentity:
    """Identity of a repository that survives a move: root commits and the origin URL."""

    __pydantic_config__ = STRICT
    root_commits: list[str] = field(default_factory=list)
    """SHAs of the commits without parents (a repository's birth certificate)."""
    remote_url: str | None = None
    """The `origin` URL, credentials removed."""


@dataclass(frozen=True, kw_only=True)
class GitBaseline:
    """Where the session runs: repository, worktree, branch, HEAD (and a dirty fingerprint)."""

    __pydantic_config__ = STRICT
    repo_root: str | None = None
    """The main working tree of the repository."""
    worktree: str | None = None
    """The working tree the session runs in (differs from repo_root in a linked worktree)."""
    identity: RepoIdentity | None = None
    """The repository's identity (root commits, remote)."""
    branch: str | None = None
    """The checked-out branch; None on a detached HEAD."""
    head: str | None = None
    """The commit HEAD points at."""
    dirty: str | None = None
    """A digest of the uncommitted changes; None when clean or not captured."""


# ---- one rule per record type --------------------------------------------------------------------


def _meta(r: Record) -> str:
    parent = r.get("resumed_from") or (r.get("forked_from") or {}).get("thread_id")
    source = r.get("source", "")
    how = {"startup": "started", "resume": "resumed from", "fork": "forked from"}.get(source, source)
    return f"session {how} {parent}" if parent else f"session {how}"


def _lifecycle(r: Record) -> str:
    rewind = r.get("rewind")
    if isinstance(rewind, dict):
        return _rewind(rewind)
    text = f"{r.get('source')}: {r.get('reason', '')}".rstrip(": ")
    return text + (f" (decision {r['decision']})" if r.get("decision") else "")


def _rewind(info: Record) -> str:
    what = (f"undo of the rewind at seq {info['undo_of']}" if info.get("undo_of") is not None
            else f"to seq {info.get('to_seq')}")
    if info.get("stage") == "end":
        done = sum(1 for s in (info.get("outcomes") or {}).values() if s in ("written", "deleted"))
        return f"rewind {what} done: {done} file(s) changed"
    return f"rewind {what}: {len(info.get('planned') or {})} file(s) planned"


def _verifier(r: Record) -> str:
    score = f" {r.get('passed')}/{r.get('total')}" if r.get("total") is not None else ""
    at = f" at {r['checkpoint']}" if r.get("checkpoint") else ""
    return f"{r.get('kind', 'tests')}{score}{at}"


def _file_change(r: Record) -> str:
    author = r.get("author", "agent")
    if r.get("change") == "seen":
        return f"{r.get('path')} seen"
    return f"{r.get('path')} by {author}" + (f" (rewind of seq {r['rewind_seq']})"
                                             if r.get("rewind_seq") is not None else "")


def _todo(r: Record) -> str:
    items = r.get("items") or []
    done = sum(1 for i in items if isinstance(i, dict) and i.get("status") == "done")
    return f"todos {done}/{len(items)} done"


def _git_moved(r: Record) -> str:
    old, new = r.get("from_branch"), r.get("to_branch")
    if old != new:
        text = f"checkout {old or 'detached'} → {new or 'detached'}"
    else:
        text = f"HEAD {(r.get('from_head') or '-')[:7]} → {(r.get('to_head') or '-')[:7]}"
    files, touched = r.get("files") or 0, r.get("touched") or []
    if files:
        text += f" ({files} file{'s' if files != 1 else ''}"
        text += f", {len(touched)} touched by the session)" if touched else ")"
    return text


def _checkpoint(r: Record) -> str:
    meta = r.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    where = f" in {r['ns']}" if r.get("ns") else ""
    return f"checkpoint {r.get('checkpoint_id')} step {meta.get('step')}{where}"


def _transcript(r: Record) -> str:
    where = f" of {r['subpath']}" if r.get("subpath") else ""
    return f"{len(r.get('entries') or [])} transcript entries{where}"


class TypeRule(NamedTuple):  # not a dataclass: ~5x cheaper to create at import (issue 13)
    """How Session Keeper treats one record type."""

    writer: Literal["client", "keeper"]
    """client: any caller may record it; keeper: only Session Keeper itself writes it."""
    describe: Callable[[Record], str] | None = None
    """One line for a thread's timeline; None: the type is not shown there."""


RULES: Mapping[str, TypeRule] = MappingProxyType({
    "session_meta": TypeRule("keeper", _meta),
    "lifecycle": TypeRule("keeper", _lifecycle),
    "snapshot": TypeRule("keeper"),
    "message": TypeRule("client"),
    "cost": TypeRule("client"),
    "operation": TypeRule("client", lambda r: f"{r.get('tool')} {r.get('operation_id')} "
                                              f"{r.get('status')}"),
    "todo": TypeRule("client", _todo),
    "verifier": TypeRule("client", _verifier),
    "file_change": TypeRule("client", _file_change),
    "compacted": TypeRule("client", lambda r: f"compacted through seq {r.get('through_seq')}"),
    "title": TypeRule("client", lambda r: str(r.get("title"))),
    "model": TypeRule("client", lambda r: f"model {r.get('name')}"),
    "permissions": TypeRule("client",
                            lambda r: f"{r.get('approval_mode')} / {r.get('sandbox_policy')}"),
    "baseline": TypeRule("client", lambda r: f"baseline {r.get('branch') or 'detached'} "
                                             f"@ {(r.get('head') or '-')[:10]}"),
    "git_moved": TypeRule("client", _git_moved),
    "checkpoint": TypeRule("client", _checkpoint),
    "checkpoint_writes": TypeRule("client", lambda r: f"{len(r.get('writes') or [])} pending "
                                                      f"write(s) of task {r.get('task_id')}"),
    "checkpoints_removed": TypeRule("client", lambda r: f"{len(r.get('removed') or [])} "
                                                        f"checkpoint(s) removed ({r.get('reason')})"),
    "transcript": TypeRule("client", _transcript),
})
RECORD_TYPES = frozenset(RULES)
KEEPER_TYPES = frozenset(t for t, rule in RULES.items() if rule.writer == "keeper")


def describe(record: Record) -> str | None:
    """The timeline line of a record, or None when its type is not shown in a timeline."""
    rule = RULES.get(record.get("type", ""))
    return rule.describe(record) if rule is not None and rule.describe is not None else None


# ---- records as data -----------------------------------------------------------------------------


_ENVELOPE = ("seq", "ts")


def own_body(data: Any) -> bytes:
    """The JSON body (no `seq`/`ts`: the recorder adds those) of a record Session Keeper builds
    itself — meta, lifecycle, snapshot — encoded without validation: it comes from the typed
    dataclasses, not from outside, so no pydantic is imported for it (`validate.event_body`
    checks what arrives from outside, and calls this for the bytes)."""
    if data.__class__ is not dict:  # a plain dict, the common case, needs no look at its type
        if is_dataclass(data) and not isinstance(data, type):
            data = plain(data)
        if not isinstance(data, dict):
            raise InvalidEvent(f"event: expected a JSON object, not {type(data).__name__}")
    if "seq" in data or "ts" in data:  # _ENVELOPE
        data = {k: v for k, v in data.items() if k not in _ENVELOPE}
    try:
        return orjson.dumps(data)
    except (TypeError, orjson.JSONEncodeError) as exc:
        raise InvalidEvent(f"event: not encodable as JSON ({exc})") from None


def plain(value: Any) -> Any:
    """A record dataclass (or any value) as JSON-able data, without None fields."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(v) for f in fields(value)
                if (v := getattr(value, f.name)) is not None}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def blob_refs(record: Record) -> list[str]:
    """The blob keys a record names as stored: a file version's (`content` / `before_content`
    "stored") or a framework payload's (`payload_refs`)."""
    if record.get("type") != "file_change":
        return payload_refs(record)
    return [h for h, kept in ((record.get("after_hash"), record.get("content")),
                              (record.get("before_hash"), record.get("before_content")))
            if kept == "stored" and isinstance(h, str)]


_PAYLOAD_ROWS = {"checkpoint": "values", "checkpoint_writes": "writes"}
"""The framework records whose rows each end with a payload, and the field holding the rows."""


def payload_refs(record: Record) -> list[str]:
    """The blob keys of a framework record's payloads (["blob", type, key] ending each row)."""
    rows = record.get(_PAYLOAD_ROWS.get(str(record.get("type")), ""))
    if not isinstance(rows, list):
        return []
    return [row[-1][2] for row in rows
            if isinstance(row, list) and row and isinstance(row[-1], list)
            and len(row[-1]) == 3 and row[-1][0] == "blob" and isinstance(row[-1][2], str)]


def schema_version_of(meta: Record) -> Any:
    """The schema version a `session_meta` record declares (schema 1 nested it in `payload`)."""
    if "schema_version" in meta:
        return meta["schema_version"]
    payload = meta.get("payload")
    return payload.get("schema_version") if isinstance(payload, dict) else None


def upcast(record: Record, version: int) -> Record:
    """Bring a record of an older schema version up to the current one (the one place for this)."""
    if version == 1:
        payload = record.pop("payload", None) or {}
        record["ts"] = record.pop("timestamp", None)
        record.update(payload)
        if record.get("type") == "session_meta":
            record["schema_version"] = SCHEMA_VERSION
    return record
