"""The records of a thread's own course: messages, compaction, title, permissions, model and
cost as they change, and the snapshots of its folded state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .thread import Event
from .values import Permissions


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
