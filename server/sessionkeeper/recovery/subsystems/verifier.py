"""How far the session verified: the latest test run, the latest review, and the seq each ran at.

Either is stale once a file it covered changed after it ran: a file_change recorded after its seq,
or a disk content that is not the last recorded version. Stale results are reported, not dropped.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .base import Findings, Invalidation, Record, Subsystem, Workspace, register
from .file_history import FileHistory

_WHAT = {"tests": "the test run", "review": "the review"}


@register
class VerifierState(Subsystem):
    """{"tests": {passed, total, checkpoint, command, seq} | None, "review": {...} | None}."""

    name = "verifier"
    depends_on = ("file_history",)
    handles = frozenset({"verifier"})

    def __init__(self) -> None:
        self.state: dict[str, dict[str, Any] | None] = {"tests": None, "review": None}

    def apply(self, record: Record) -> None:
        """Keep the latest test run or review (a review keeps its findings)."""
        kind = record.get("kind", "tests")
        entry = {"seq": record.get("seq"), "checkpoint": record.get("checkpoint"),
                 "findings": list(record.get("findings", []))}
        if kind == "tests":
            entry.update(passed=record.get("passed"), total=record.get("total"),
                         command=record.get("command"))
        self.state[kind] = entry

    def snapshot(self) -> dict[str, Any]:
        """Return the latest tests and review entries."""
        return copy.deepcopy(self.state)

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.state = {"tests": None, "review": None, **copy.deepcopy(state)}

    def validate(self, workspace: Workspace, deps: Mapping[str, Subsystem]) -> Findings:
        """Mark each result stale when a file changed after it ran (the verifier must rerun)."""
        history = deps["file_history"]
        assert isinstance(history, FileHistory)
        on_disk = {d.recorded["path"] for d in history.disk_differences(workspace)}
        found: list[Invalidation] = []
        for kind, entry in self.state.items():
            if entry is None or entry["seq"] is None:
                continue
            changed = sorted(set(history.changed_after(entry["seq"])) | on_disk)
            if changed:
                what = f"{_WHAT[kind]} at seq {entry['seq']}"
                reason = f"stale: {', '.join(changed)} changed after {what}"
                found.append(Invalidation(self.name, reason))
        return Findings(invalidations=found)

    def summary(self) -> dict[str, Any]:
        """Return {"tests": "7/9"-style counts and checkpoint, "review": findings} as restored."""
        return copy.deepcopy(self.state)

    def headline(self) -> str:
        """The latest test run and review."""
        parts = []
        tests, review = self.state["tests"], self.state["review"]
        if tests:
            parts.append(f"tests {tests['passed']}/{tests['total']} passed")
        if review:
            parts.append(f"review: {len(review['findings'])} finding(s)")
        return ", ".join(parts) or "none recorded"
