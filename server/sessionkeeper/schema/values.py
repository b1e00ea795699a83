"""Values inside records: permissions, a fork's origin, the client, a todo item, a rewind's plan.

Each is a frozen dataclass with strict pydantic config (no coercion); records hold them as fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..events import (
    DEFAULT_APPROVAL,
    DEFAULT_SANDBOX,
    DEFAULT_TOOLS,
    STRICT,
    ApprovalMode,
    RewindAction,
    RewindOutcome,
    SandboxPolicy,
)


@dataclass(frozen=True, kw_only=True)
class Permissions:
    """What the agent may do: restored exactly, never inferred from text."""

    __pydantic_config__ = STRICT
    approval_mode: ApprovalMode = DEFAULT_APPROVAL
    """When the agent asks the user before acting."""
    sandbox_policy: SandboxPolicy = DEFAULT_SANDBOX
    """What the agent's tools may touch."""
    tool_profile: str = DEFAULT_TOOLS
    """The named set of tools the agent may use."""


@dataclass(frozen=True, kw_only=True)
class ForkedFrom:
    """The point of the parent thread a fork starts from."""

    __pydantic_config__ = STRICT
    thread_id: str
    """The parent thread."""
    session_id: str
    """The parent's session the fork was taken from."""
    seq: int
    """The parent's last record the fork includes."""


@dataclass(frozen=True, kw_only=True)
class ClientInfo:
    """Which program wrote the session."""

    __pydantic_config__ = STRICT
    name: str
    """The program's name (e.g. sessionkeeper-python, codex, claude)."""
    version: str | None = None
    """Its version."""


@dataclass(frozen=True, kw_only=True)
class Machine:
    """Where the session ran: the machine's host name and the user who ran it."""

    __pydantic_config__ = STRICT
    host: str
    """The host name ($SESSIONKEEPER_MACHINE, else the system's)."""
    user: str | None = None
    """The operating-system user."""


@dataclass(frozen=True, kw_only=True)
class TodoItem:
    """One todo of the agent."""

    __pydantic_config__ = STRICT
    id: str
    """Stable within the list."""
    text: str
    """What is to be done."""
    status: Literal["pending", "in_progress", "done"] = "pending"
    """Where the item stands."""


@dataclass(frozen=True, kw_only=True)
class RewindInfo:
    """What a `rewind` lifecycle record holds: the plan when the rewind begins, the outcome at its end.

    A `begin` record without an `end` record after it is a rewind a crash interrupted: the next
    rewind of the thread finishes it first (re-planning it is idempotent).
    """

    __pydantic_config__ = STRICT
    stage: Literal["begin", "end"]
    """begin: written (durably) before any file is touched; end: after every file was handled."""
    to_seq: int
    """The seq whose file versions are restored."""
    undo_of: int | None = None
    """For an undo: the seq of the `begin` record of the rewind it undoes."""
    paths: list[str] | None = None
    """Only these files (workspace-relative); None: every file the session's history knows."""
    force: bool = False
    """Files changed outside the session were overwritten (their content kept as blobs first)."""
    planned: dict[str, RewindAction] = field(default_factory=dict)
    """begin: what the plan does to each file."""
    begin_seq: int | None = None
    """end: the seq of the `begin` record this one closes."""
    outcomes: dict[str, RewindOutcome] = field(default_factory=dict)
    """end: what was done to each file."""

    def __post_init__(self) -> None:
        if self.to_seq < 0:
            raise ValueError("to_seq must not be negative")
        if self.stage == "end" and self.begin_seq is None:
            raise ValueError("an end record needs the begin_seq it closes")
