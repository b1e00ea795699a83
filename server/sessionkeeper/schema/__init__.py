"""The rollout record schema: one frozen dataclass per record type — the single definition.

Imported only where records are built or validated (`validate.py` checks records from outside
against these classes and generates the JSON Schema from them); reading and listing never need it.
One module per family — `values` (inside records), `thread` (the envelope and the thread's own
course), `work` (what the agent did, how far it verified), `frameworks` (integrations' records) —
all re-exported here: callers import from `sessionkeeper.schema`.
"""

from __future__ import annotations

from dataclasses import fields

from .frameworks import GraphCheckpoint, GraphRemoved, GraphWrites, Transcript
from .thread import (
    Compacted,
    Cost,
    Event,
    Lifecycle,
    Message,
    ModelChanged,
    PermissionsChanged,
    SessionMeta,
    Snapshot,
    Title,
)
from .values import ClientInfo, ForkedFrom, Permissions, RewindInfo, TodoItem
from .work import Baseline, FileChange, GitMoved, Operation, Todo, Verifier

__all__ = [
    "RECORD_CLASSES", "Baseline", "ClientInfo", "Compacted", "Cost", "Event", "FileChange",
    "ForkedFrom", "GitMoved", "GraphCheckpoint", "GraphRemoved", "GraphWrites", "Lifecycle",
    "Message", "ModelChanged", "Operation", "Permissions", "PermissionsChanged", "RewindInfo",
    "SessionMeta", "Snapshot", "Title", "Todo", "TodoItem", "Transcript", "Verifier", "type_of",
]

RECORD_CLASSES: tuple[type[Event], ...] = (
    SessionMeta, Lifecycle, Message, Operation, Todo, Verifier, FileChange, Cost,
    PermissionsChanged, ModelChanged, Compacted, Title, Baseline, GitMoved, Snapshot,
    GraphCheckpoint, GraphWrites, GraphRemoved, Transcript,
)


def type_of(cls: type[Event]) -> str:
    """The `type` tag of a record dataclass."""
    tag = next(f.default for f in fields(cls) if f.name == "type")
    assert isinstance(tag, str)
    return tag
