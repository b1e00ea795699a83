"""The records of framework adapters (`integrations/`): LangGraph checkpoints, Claude SDK transcripts.

A payload reference: ["inline", serializer type, hex of the bytes] | ["blob", type, blob key] |
["empty"]. Payloads are the framework serializer's output, opaque to Session Keeper; lowercase
hex can never match a credential shape, so redaction leaves them intact. User-chosen names
(channels, namespaces) are values inside lists, never object keys; the LangGraph saver writes its
records unredacted after redacting their free text (thread id, metadata) itself, since a name such
as `fetch_token:<task id>` reads like a credential assignment and must stay exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .thread import Event


def _check_rows(rows: Sequence[Sequence[object]], what: str, width: int) -> None:
    for row in rows:
        if len(row) != width:
            raise ValueError(f"each of {what} has {width} items, not {len(row)}")


@dataclass(frozen=True, kw_only=True)
class GraphCheckpoint(Event):
    """A framework checkpoint (LangGraph): its ids, metadata, versions and the values it stores."""

    type: Literal["checkpoint"] = "checkpoint"
    thread: str
    """The framework's own thread id, as the caller gave it."""
    ns: str = ""
    """The checkpoint namespace ("" for the root graph)."""
    checkpoint_id: str
    """The checkpoint's id (monotonic: ids sort in creation order)."""
    parent_id: str | None = None
    """The checkpoint this one follows."""
    checkpoint: list[str]
    """[serializer type, hex]: the checkpoint without its channel values."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """The framework's metadata of the checkpoint (source, step, parents, run_id, ...)."""
    versions: list[list[Any]]
    """[[channel, version], ...]: every channel of the checkpoint."""
    values: list[list[Any]] = field(default_factory=list)
    """[[channel, version, payload], ...]: the values stored here; every other channel keeps
    the value it had at the same version in the namespace's previous checkpoint."""

    def __post_init__(self) -> None:
        _check_rows(self.versions, "versions", 2)
        _check_rows(self.values, "values", 3)


@dataclass(frozen=True, kw_only=True)
class GraphWrites(Event):
    """Pending writes of one task against a checkpoint; (task_id, idx) is their identity."""

    type: Literal["checkpoint_writes"] = "checkpoint_writes"
    thread: str
    """The framework's own thread id."""
    ns: str = ""
    """The checkpoint namespace."""
    checkpoint_id: str
    """The checkpoint the writes belong to."""
    task_id: str
    """The task that wrote them."""
    task_path: str = ""
    """The task's path (the order writes of one step are applied in)."""
    writes: list[list[Any]]
    """[[idx, channel, payload], ...]."""

    def __post_init__(self) -> None:
        _check_rows(self.writes, "writes", 3)


@dataclass(frozen=True, kw_only=True)
class GraphRemoved(Event):
    """Checkpoints (and their writes) removed from a framework thread; the log keeps the bytes."""

    type: Literal["checkpoints_removed"] = "checkpoints_removed"
    thread: str
    """The framework's own thread id."""
    removed: list[list[str]]
    """[[ns, checkpoint_id], ...]."""
    reason: str = ""
    """Why (prune, delete_for_runs)."""

    def __post_init__(self) -> None:
        _check_rows(self.removed, "removed", 2)


@dataclass(frozen=True, kw_only=True)
class Transcript(Event):
    """Entries of an agent SDK's transcript (Claude Agent SDK SessionStore), in append order."""

    type: Literal["transcript"] = "transcript"
    project: str
    """The SDK's project key."""
    session: str
    """The SDK's session id."""
    subpath: str | None = None
    """The subagent transcript's subpath; absent for the main transcript."""
    entries: list[dict[str, Any]]
    """The entries, as the SDK gave them (opaque JSON)."""
    summary: dict[str, Any] | None = None
    """The SDK's folded session summary after these entries (opaque, main transcript only)."""
