"""Framework checkpoints of a thread (LangGraph): the newest per namespace, with its pending writes.

Invariants: per namespace the state holds only the newest checkpoint, every channel resolved to a
payload reference (the value its record stores, or the one the namespace's previous checkpoint had
at the same version), and the writes recorded against it, one per (task_id, idx) — so a snapshot
holds one checkpoint per namespace, whatever the history. Older checkpoints are folded from the log
by `fold_history` with the same rules. A write with a negative idx (a framework's special channel)
replaces an earlier one of the same (task_id, idx); any other repeated (task_id, idx) is ignored.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .base import Record, Subsystem, register

Entry = dict[str, Any]
"""{id, parent, thread, checkpoint, metadata, channels: [[channel, version, payload]], writes:
[[task_id, idx, channel, payload, task_path]], seq}."""
MISSING = ["missing"]
"""The payload of a channel whose value is in no record folded so far (never written by us)."""


def _resolve(previous: Entry | None, record: Record) -> list[list[Any]]:
    """Every channel of a checkpoint record with its payload (stored here or carried over)."""
    carried = {row[0]: (row[1], row[2]) for row in previous["channels"]} if previous else {}
    stored = {row[0]: (row[1], row[2]) for row in record.get("values", [])}
    out = []
    for channel, version in record.get("versions", []):
        for source in (stored, carried):
            found = source.get(channel)
            if found is not None and found[0] == version:
                out.append([channel, version, found[1]])
                break
        else:
            out.append([channel, version, MISSING])
    return out


def entry_of(record: Record, previous: Entry | None) -> Entry:
    """The folded form of a `checkpoint` record, given the namespace's previous checkpoint."""
    writes = previous["writes"] if previous and previous["id"] == record["checkpoint_id"] else []
    return {"id": record["checkpoint_id"], "parent": record.get("parent_id"),
            "thread": record.get("thread"), "checkpoint": record["checkpoint"],
            "metadata": record.get("metadata") or {}, "channels": _resolve(previous, record),
            "writes": list(writes), "seq": record.get("seq")}


def add_writes(entry: Entry, record: Record) -> int:
    """Fold a `checkpoint_writes` record into its checkpoint's entry; returns writes added."""
    task, path = record["task_id"], record.get("task_path", "")
    known = {(w[0], w[1]): n for n, w in enumerate(entry["writes"])}
    added = 0
    for idx, channel, payload in record.get("writes", []):
        row = [task, idx, channel, payload, path]
        at = known.get((task, idx))
        if at is None:
            known[(task, idx)] = len(entry["writes"])
            entry["writes"].append(row)
            added += 1
        elif isinstance(idx, int) and idx < 0:
            entry["writes"][at] = row
    return added


@dataclass
class History:
    """Every checkpoint of a thread folded from its log: {ns: {checkpoint_id: entry}} in order."""

    thread: str | None = None
    namespaces: dict[str, dict[str, Entry]] = field(default_factory=dict)
    latest: dict[str, Entry] = field(default_factory=dict)

    def apply(self, record: Record) -> None:
        """Fold one record of the checkpoint types (others are ignored)."""
        kind = record.get("type")
        if kind == "checkpoint":
            ns = record.get("ns", "")
            entry = entry_of(record, self.latest.get(ns))
            self.latest[ns] = entry
            self.namespaces.setdefault(ns, {})[entry["id"]] = entry
            self.thread = record.get("thread", self.thread)
        elif kind == "checkpoint_writes":
            found = self.namespaces.get(record.get("ns", ""), {}).get(record["checkpoint_id"])
            if found is not None:
                add_writes(found, record)
        elif kind == "checkpoints_removed":
            for ns, checkpoint_id in record.get("removed", []):
                self.namespaces.get(ns, {}).pop(checkpoint_id, None)
                if self.latest.get(ns, {}).get("id") == checkpoint_id:
                    del self.latest[ns]


def fold_history(records: list[Record]) -> History:
    """Fold a thread's records (oldest first) into every checkpoint still present."""
    history = History()
    for record in records:
        history.apply(record)
    return history


@register
class Checkpoints(Subsystem):
    """The newest checkpoint per namespace with its pending writes; counts of the rest."""

    name = "checkpoints"
    handles = frozenset({"checkpoint", "checkpoint_writes", "checkpoints_removed"})

    def __init__(self) -> None:
        self.thread: str | None = None
        self.latest: dict[str, Entry] = {}
        self.recorded = 0
        self.removed = 0

    def apply(self, record: Record) -> None:
        """Fold a checkpoint, its writes, or a removal."""
        kind = record["type"]
        ns = record.get("ns", "")
        if kind == "checkpoint":
            previous = self.latest.get(ns)
            self.latest[ns] = entry_of(record, previous)
            self.recorded += previous is None or previous["id"] != record["checkpoint_id"]
            self.thread = record.get("thread", self.thread)
        elif kind == "checkpoint_writes":
            entry = self.latest.get(ns)
            if entry is not None and entry["id"] == record["checkpoint_id"]:
                add_writes(entry, record)
        else:
            for where, checkpoint_id in record.get("removed", []):
                self.removed += 1
                if self.latest.get(where, {}).get("id") == checkpoint_id:
                    del self.latest[where]

    def newest(self, ns: str) -> Entry | None:
        """The newest checkpoint of a namespace (do not change it), or None."""
        return self.latest.get(ns)

    def needed(self) -> set[str]:
        """The blob keys the newest checkpoints need: their values' and pending writes' blobs."""
        payloads = [row[2] for e in self.latest.values() for row in e["channels"]] + \
            [row[3] for e in self.latest.values() for row in e["writes"]]
        return {p[2] for p in payloads if isinstance(p, list) and len(p) == 3 and p[0] == "blob"}

    def snapshot(self) -> dict[str, Any]:
        """Return the thread, the newest checkpoint per namespace, and the counts."""
        return {"thread": self.thread, "latest": copy.deepcopy(self.latest),
                "recorded": self.recorded, "removed": self.removed}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.thread = state.get("thread")
        self.latest = copy.deepcopy(state.get("latest", {}))
        self.recorded = int(state.get("recorded", 0))
        self.removed = int(state.get("removed", 0))

    def summary(self) -> dict[str, Any]:
        """Return the counts and, per namespace, the newest checkpoint's id, step and writes."""
        return {"thread": self.thread, "recorded": self.recorded, "removed": self.removed,
                "namespaces": {ns: {"checkpoint_id": e["id"],
                                    "step": e["metadata"].get("step"),
                                    "source": e["metadata"].get("source"),
                                    "pending_writes": len(e["writes"])}
                               for ns, e in self.latest.items()}}

    def headline(self) -> str:
        """Checkpoints recorded and the newest root step (empty when none: not a framework thread)."""
        if not self.recorded:
            return ""
        root = self.latest.get("")
        step = f", latest step {root['metadata'].get('step')}" if root else ""
        removed = f" ({self.removed} removed)" if self.removed else ""
        return f"{self.recorded} checkpoint(s) in {len(self.latest)} namespace(s){step}{removed}"
