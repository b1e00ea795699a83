"""The record envelope, and the records that open and move a thread: its meta and lifecycle.

`Event` is the envelope every record shares (`seq` and `ts` are assigned by the recorder).
`SessionMeta` is line 1 of every rollout and `Lifecycle` each transition: what a start writes,
without the rest of the schema (`course`, `work`, `frameworks`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..events import SCHEMA_VERSION, STRICT, GitBaseline, Source
from .values import ClientInfo, ForkedFrom, Machine, Permissions, RewindInfo


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
    machine: Machine | None = None
    """The machine (host name, user) the session runs on; absent in rollouts written before."""
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
