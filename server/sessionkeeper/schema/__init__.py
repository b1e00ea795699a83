"""The rollout record schema: one frozen dataclass per record type — the single definition.

Imported only where records are built or validated (`validate.py` checks records from outside
against these classes and generates the JSON Schema from them); reading and listing never need it.
One module per family — `values` (inside records), `thread` (the envelope, meta and lifecycle),
`course` (the thread's messages, settings and snapshots), `work` (what the agent did, how far it
verified), `frameworks` (integrations' records) — all re-exported here: callers import from
`sessionkeeper.schema`. A family's module is imported when one of its names is first asked for
(a start builds meta and lifecycle records only: `thread` and `values`).

It may import the vocabulary only (events, ids, errors, constraints).
"""

from __future__ import annotations

from dataclasses import fields
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .course import Compacted, Cost, Message, ModelChanged, PermissionsChanged, Snapshot, Title
    from .frameworks import GraphCheckpoint, GraphRemoved, GraphWrites, Transcript
    from .thread import Event, Lifecycle, SessionMeta
    from .values import ClientInfo, ForkedFrom, Machine, Permissions, RewindInfo, TodoItem
    from .work import Baseline, FileChange, GitMoved, Operation, Todo, Verifier

    RECORD_CLASSES: tuple[type[Event], ...]

__all__ = [
    "RECORD_CLASSES", "Baseline", "ClientInfo", "Compacted", "Cost", "Event", "FileChange",
    "ForkedFrom", "GitMoved", "GraphCheckpoint", "GraphRemoved", "GraphWrites", "Lifecycle",
    "Machine", "Message", "ModelChanged", "Operation", "Permissions", "PermissionsChanged", "RewindInfo",
    "SessionMeta", "Snapshot", "Title", "Todo", "TodoItem", "Transcript", "Verifier", "type_of",
]

_FAMILIES = {
    "values": ("ClientInfo", "ForkedFrom", "Machine", "Permissions", "RewindInfo", "TodoItem"),
    "thread": ("Event", "Lifecycle", "SessionMeta"),
    "course": ("Compacted", "Cost", "Message", "ModelChanged", "PermissionsChanged", "Snapshot",
               "Title"),
    "work": ("Baseline", "FileChange", "GitMoved", "Operation", "Todo", "Verifier"),
    "frameworks": ("GraphCheckpoint", "GraphRemoved", "GraphWrites", "Transcript"),
}
_MODULE_OF = {name: module for module, names in _FAMILIES.items() for name in names}
_RECORDS = ("SessionMeta", "Lifecycle", "Message", "Operation", "Todo", "Verifier", "FileChange",
            "Cost", "PermissionsChanged", "ModelChanged", "Compacted", "Title", "Baseline",
            "GitMoved", "Snapshot", "GraphCheckpoint", "GraphWrites", "GraphRemoved", "Transcript")
"""The record classes, in the order of `RECORD_CLASSES`."""


def __getattr__(name: str) -> Any:
    """A name of `__all__`, its family's module imported on first use (then a plain global)."""
    if name == "RECORD_CLASSES":
        value: Any = tuple(__getattr__(record) for record in _RECORDS)
    elif name in _MODULE_OF:
        value = getattr(import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def type_of(cls: type[Event]) -> str:
    """The `type` tag of a record dataclass."""
    tag = next(f.default for f in fields(cls) if f.name == "type")
    assert isinstance(tag, str)
    return tag
