"""The record envelope, and the records of a thread's own course.

`Event` is the envelope every record shares (`seq` and `ts` are assigned by the recorder). The
records here say who runs the thread and how: its meta (line 1 of every rollout), lifecycle
transitions, messages, compaction, title, permissions, model and cost, and the snapshots of its
folded state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..events import SCHEMA_VERSION, STRICT, GitBaseline, Source
from .values import ClientInfo, ForkedFrom, Permissions, RewindInfo


@dataclass(frozen=True, kw_only=True)
class Event:
    """Envelope every record shares; `seq` and `ts` are assigned by the recorder."""

    __pydantic_config__ = STRICT
    seq: int | None = None
    """Thread-wide position of the record (assigned when written)."""
    ts: str | None = None
    """UTC time the record was written (assigned when written)."""
    data: dict[str, Any] | None = None
    """Free-form extra data of the writer."""


@dataclass(frozen=True, kw_only=True)
class SessionMeta(Event):
    """Line 1 of every rollout: ids, lineage, workspace baseline, permissions, model, client."""

    type: Literal["session_meta"] = "session_meta"
    schema_version: int = SCHEMA_VERSION
    """The rollout format this file is written in."""
    thread_id: str
    """The logical conversation (stable across runs)."""
    session_id: str
    """This process run of the thread."""
    resumed_from: str | None = None
    """The session this one resumed."""
    forked_from: ForkedFrom | None = None
    """Where a forked thread came from."""
    source: Source = "startup"
    """Why this session started."""
    cwd: str
    """The workspace directory."""
    baseline: GitBaseline | None = None
    """The git baseline at the start; None outside git."""
    permissions: Permissions = field(default_factory=Permissions)
    """The permissions the session starts with."""
    model: str | None = None
    """The model the session starts with."""
    client: ClientInfo | None = None
    """The program that writes the session."""
    agent: str | None = None
    """The framework recording through Session Keeper (e.g. langgraph, claude-sdk); absent: native."""
    title: str | None = None
    """The thread's title."""


@dataclass(frozen=True, kw_only=True)
class Lifecycle(Event):
    """A lifecycle transition with its source, reason and (for resume) the decision taken."""

    type: Literal["lifecycle"] = "lifecycle"
    source: Source
    """Which transition."""
    reason: str = ""
    """Why it happened."""
    decision: str | None = None
    """What the user (or CI policy) decided, for a resume."""
    rewind: RewindInfo | None = None
    """For source `rewind`: its plan (stage begin) or its outcome (stage end)."""

    def __post_init__(self) -> None:
        if (self.source == "rewind") != (self.rewind is not None):
            raise ValueError("a rewind lifecycle record (and only one) carries `rewind`")


@dataclass(frozen=True, kw_only=True)
class Message(Event):
    """A conversation message."""

    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "system", "tool"]
    """Who speaks."""
    text: str
    """What was said."""
    message_id: str | None = None
    """The client's id of the message (a re-delivered id is not restored twice)."""


@dataclass(frozen=True, kw_only=True)
class Compacted(Event):
    """A summary that replaces the conversation up to `through_seq` (history is kept)."""

    type: Literal["compacted"] = "compacted"
    summary: str
    """The summary the model continues from."""
    through_seq: int
    """The last record the summary covers (0 or more, not beyond the thread)."""

    def __post_init__(self) -> None:
        if self.through_seq < 0:
            raise ValueError("through_seq must not be negative")


@dataclass(frozen=True, kw_only=True)
class Title(Event):
    """The thread's title as it now stands."""

    type: Literal["title"] = "title"
    title: str
    """The title."""


@dataclass(frozen=True, kw_only=True)
class PermissionsChanged(Permissions, Event):
    """Permissions as they now stand."""

    type: Literal["permissions"] = "permissions"


@dataclass(frozen=True, kw_only=True)
class ModelChanged(Event):
    """The model and its overrides as they now stand."""

    type: Literal["model"] = "model"
    name: str
    """The model."""
    overrides: dict[str, Any] = field(default_factory=dict)
    """Settings that differ from the model's defaults."""


@dataclass(frozen=True, kw_only=True)
class Cost(Event):
    """Tokens and money spent on one model call."""

    type: Literal["cost"] = "cost"
    model: str
    """The model called."""
    input_tokens: int = 0
    """Tokens sent."""
    output_tokens: int = 0
    """Tokens received."""
    usd: float = 0.0
    """Money spent, in US dollars."""


@dataclass(frozen=True, kw_only=True)
class Snapshot(Event):
    """The folded state of every subsystem through `through_seq` of this thread."""

    type: Literal["snapshot"] = "snapshot"
    through_seq: int
    """The last record the state includes."""
    state: dict[str, Any]
    """{"subsystems": {name: state}, "summary": the thread's status summary}."""
    prefix_bytes: int | None = None
    """The file's size before this line ..."""
    prefix_crc: str | None = None
    """... and the CRC32 of those bytes: damage before the snapshot is caught."""
