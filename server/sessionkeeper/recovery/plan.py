"""Planning a resume: a report and the user's decision give the one action to carry out. Pure.

Nothing continues over drift without an explicit decision (`relocate` accepts a relocation only,
no other difference), and nothing continues when blocked (a blocked thread can be relocated,
forked or exported).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .report import Decision, Report

ActionKind = Literal["stop", "continue", "fork", "relocate", "export"]


@dataclass(frozen=True)
class Action:
    """What the Keeper does next: stop, continue here, fork, resume elsewhere, or export."""

    kind: ActionKind
    reason: str = ""  # the lifecycle reason a continued or forked session records
    workspace: str | None = None  # relocate: where the repository was found


def _reason(report: Report) -> str:
    if not report.differences:
        return "resumed: environment identical"
    return f"resumed despite: {', '.join(sorted({d.kind for d in report.differences}))}"


def plan(report: Report, decision: Decision | None) -> Action:
    """The action a decision allows for a report's verdict."""
    if decision == "fork":
        return Action("fork", f"forked at seq {report.restored_to_seq}")
    if decision == "export":
        return Action("export")
    if decision == "relocate" and report.verdict == "blocked" and report.relocate_to:
        return Action("relocate", workspace=report.relocate_to)
    if report.verdict == "ok" and decision in (None, "continue"):
        return Action("continue", _reason(report))
    if report.verdict == "drift" and (decision == "continue" or decision == "relocate" and all(
            d.kind == "relocated" for d in report.differences)):  # relocating accepts no more
        return Action("continue", _reason(report))
    return Action("stop")
