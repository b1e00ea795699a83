"""The rewinds of a thread: each one's plan (its `begin` record) and outcome (its `end` record).

Invariant: a rewind is finished once its `end` record is folded; one without it was interrupted
(a crash between the two) and is reported until the next rewind of the thread finishes it.
Undo works as a stack: it takes the latest rewind that is no undo itself and was not undone by a
complete undo (one that left no file refused, unavailable, stale or failed).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .base import Findings, Invalidation, Record, Subsystem, Workspace, register

CHANGED = ("written", "deleted")
COMPLETE = frozenset({"written", "deleted", "unchanged"})


@register
class Rewinds(Subsystem):
    """[{seq, to_seq, undo_of, paths, force, planned, end_seq, outcomes}] in the order begun."""

    name = "rewinds"
    handles = frozenset({"lifecycle"})

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def apply(self, record: Record) -> None:
        """Fold a rewind lifecycle record: a begin adds a rewind, an end closes its begin."""
        info = record.get("rewind")
        if record.get("source") != "rewind" or not isinstance(info, dict):
            return
        if info.get("stage") == "begin":
            self.items.append({"seq": record.get("seq"), "to_seq": info.get("to_seq"),
                               "undo_of": info.get("undo_of"), "paths": info.get("paths"),
                               "force": bool(info.get("force")),
                               "planned": dict(info.get("planned") or {}),
                               "end_seq": None, "outcomes": {}})
            return
        for item in reversed(self.items):
            if item["seq"] == info.get("begin_seq"):
                item["end_seq"] = record.get("seq")
                item["outcomes"] = dict(info.get("outcomes") or {})
                return

    def snapshot(self) -> dict[str, Any]:
        """Return {"items": [...]}."""
        return {"items": copy.deepcopy(self.items)}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.items = copy.deepcopy(state.get("items", []))

    def interrupted(self) -> dict[str, Any] | None:
        """The latest rewind that began and never ended (a crash), or None."""
        last = self.items[-1] if self.items else None
        return dict(last) if last is not None and last["end_seq"] is None else None

    def latest(self) -> dict[str, Any] | None:
        """What `rewind --undo` undoes: the latest finished rewind that changed a file, is no undo
        and was not undone completely; None if there is none."""
        undone = {i["undo_of"] for i in self.items if i["undo_of"] is not None
                  and i["end_seq"] is not None and set(i["outcomes"].values()) <= COMPLETE}
        for item in reversed(self.items):
            if item["end_seq"] is not None and item["undo_of"] is None \
                    and item["seq"] not in undone and changed(item):
                return dict(item)
        return None

    def validate(self, workspace: Workspace, deps: Mapping[str, Subsystem]) -> Findings:
        """Report an interrupted rewind: its files may be half rewound until a rewind finishes it."""
        open_one = self.interrupted()
        if open_one is None:
            return Findings()
        return Findings(invalidations=[Invalidation(
            self.name, f"the rewind to seq {open_one['to_seq']} begun at seq {open_one['seq']} did "
                       "not finish; the next rewind of this thread finishes it")])

    def summary(self) -> dict[str, Any]:
        """Return how many rewinds ran, the latest one, and whether one was interrupted."""
        latest = self.items[-1] if self.items else None
        return {"count": len(self.items), "latest": copy.deepcopy(latest),
                "interrupted": self.interrupted() is not None}

    def headline(self) -> str:
        """The rewinds of the thread (empty when there were none)."""
        if not self.items:
            return ""
        last = self.items[-1]
        state = "interrupted" if last["end_seq"] is None else f"{len(changed(last))} file(s) changed"
        return f"{len(self.items)} rewind(s); the last to seq {last['to_seq']}: {state}"


def changed(item: Mapping[str, Any]) -> list[str]:
    """The paths a finished rewind wrote or deleted."""
    return sorted(p for p, o in (item.get("outcomes") or {}).items() if o in CHANGED)
