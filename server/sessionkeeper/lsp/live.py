"""Live drift: the current session's state checked against the workspace as it is now.

What a resume would find, computed while the session runs (after a branch switch, a new HEAD or
an edit of a file the session touched), so the editor shows it before anyone presses Resume.
The check is the resume's own (baseline first; when it blocks, nothing else is validated), run
on the domain worker against the live SessionState; `reason` says in a few words what differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..recovery.verdicts import Verdict

if TYPE_CHECKING:  # the checks and their findings are loaded by the first live check, not at start
    from ..recovery.findings import Difference, Invalidation
    from ..recovery.state import SessionState

FILE_KINDS = frozenset({"file_changed", "file_missing"})


@dataclass(frozen=True)
class Live:
    """The live verdict of the current session, why, and every difference behind it."""

    state: Verdict
    reason: str | None = None
    differences: list[Difference] = field(default_factory=list)
    invalidated: list[Invalidation] = field(default_factory=list)


def assess_live(state: SessionState, root: str) -> Live:
    """Check a live session's state against `root` now (domain worker only)."""
    from ..recovery.assess import BASELINE_KINDS
    from ..recovery.baseline import current_workspace
    from ..recovery.comparison import BLOCKING_KINDS, verdict_of
    from ..recovery.subsystems.worktree import Worktree

    workspace = current_workspace(root)
    baseline = state.get(Worktree).validate(workspace, {})
    invalidated: list[Invalidation] = []
    if any(d.kind in BLOCKING_KINDS for d in baseline.differences):
        differences = list(baseline.differences)
    else:
        found, invalidated = state.validate(workspace)
        differences = list(baseline.differences) + [d for d in found
                                                    if d.kind not in BASELINE_KINDS]
    verdict = verdict_of(differences)
    return Live(verdict, reason_of(differences), differences, invalidated)


def _short(value: object) -> str:
    return str(value)[:7] if value else "none"


def reason_of(differences: Sequence[Difference]) -> str | None:
    """A few words for what differs: "branch fix/payment → main · 2 files changed outside"."""
    parts: list[str] = []
    kinds = {d.kind: d for d in differences}
    if "cwd_missing" in kinds:
        return "working directory missing"
    if "other_repository" in kinds:
        return "another repository"
    if "relocated" in kinds:
        parts.append("workspace moved")
    if "branch" in kinds:
        d = kinds["branch"]
        parts.append(f"branch {d.recorded or 'detached'} → {d.current or 'detached'}")
    elif "head" in kinds:
        d = kinds["head"]
        parts.append(f"HEAD {_short(d.recorded)} → {_short(d.current)}")
    changed = sum(1 for d in differences if d.kind == "file_changed")
    missing = sum(1 for d in differences if d.kind == "file_missing")
    if changed:
        parts.append(f"{changed} file{'s' if changed > 1 else ''} changed outside")
    if missing:
        parts.append(f"{missing} file{'s' if missing > 1 else ''} missing")
    rest = sorted({d.kind for d in differences} - FILE_KINDS - {"relocated", "branch", "head"})
    parts.extend(k.replace("_", " ") for k in rest)
    return " · ".join(parts) or None


def changed_paths(differences: Sequence[Difference]) -> list[str]:
    """The session's files that differ on disk now (changed or missing)."""
    out = []
    for d in differences:
        if d.kind in FILE_KINDS and isinstance(d.recorded, dict) and d.recorded.get("path"):
            out.append(str(d.recorded["path"]))
    return out
