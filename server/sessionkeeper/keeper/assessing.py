"""A replayed thread assessed against a workspace: the report every check and resume gives.

Pure of the Keeper: it reads git (through `recovery`) and the replayed state, and changes nothing.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..recovery.findings import Difference
    from ..recovery.replay import Replayed
    from ..recovery.report import Report


def assess_here(thread: str, replayed: Replayed, *, workspace: str,
                requested: dict[str, Any] | None) -> Report:
    """The resume report of a replayed thread against `workspace`, with where its repository
    moved to, or how to switch back to what it recorded."""
    from ..recovery.advice import advise
    from ..recovery.assess import assess
    from ..recovery.baseline import current_workspace
    from ..recovery.identity import find_moved, reidentify
    from ..recovery.subsystems.worktree import Worktree

    worktree = replayed.state.get(Worktree)
    note = None
    try:  # an agent's baseline names no root commit: rebuilt here from the commits it names
        recorded, note = reidentify(replayed, worktree, os.path.abspath(workspace))
    except ValueError:  # unreadable: the worktree's validation says so (blocked)
        recorded = None
    report = assess(replayed, current_workspace(workspace, requested=requested,
                                                recorded=recorded,
                                                recorded_cwd=worktree.state["cwd"]),
                    thread_id=thread)
    if note is not None:
        report = dataclasses.replace(report, notes=[*report.notes, note])
    kinds = {d.kind for d in report.differences}
    if kinds & {"cwd_missing", "branch", "head"}:
        if recorded is None:
            return report
        commits = worktree.named_commits()
        if "cwd_missing" in kinds and (recorded.identity is not None or commits):
            moved = find_moved(recorded.identity, near=report.workspace, commits=commits)
            report = dataclasses.replace(report, relocate_to=moved)
        elif report.verdict == "drift":
            advice = advise(recorded, root=report.workspace)
            report = dataclasses.replace(
                report, switch_back=advice.command, switch_back_worktree=advice.worktree,
                notes=report.notes + ([advice.note] if advice.note else []),
                differences=[_explained(d, report.workspace) for d in report.differences])
    return report


def _explained(difference: Difference, root: str) -> Difference:
    """A HEAD difference with how HEAD moved (commits ahead, with their subjects)."""
    from ..recovery.advice import head_moved

    if difference.kind != "head" or not isinstance(difference.recorded, str) or difference.detail:
        return difference
    current = difference.current if isinstance(difference.current, str) else None
    return dataclasses.replace(difference, detail=head_moved(root, difference.recorded, current))
