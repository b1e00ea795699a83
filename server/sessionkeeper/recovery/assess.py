"""Assessing a resume: a replayed thread against the workspace as it is now gives one Report.

Pure: no I/O, no locks, no side effects — the workspace was captured before, the thread replayed
before. The baseline is validated first; when it blocks, nothing else is validated (state from
another repository is meaningless). The verdict is fixed here and nothing later changes it.
"""

from __future__ import annotations

from typing import Any

from .comparison import BLOCKING_KINDS, verdict_of
from .findings import Difference, Findings, Invalidation, Workspace
from .replay import Replayed
from .report import CHOICES, Report
from .status import status_summary
from .subsystems.worktree import Worktree

BASELINE_KINDS = frozenset({"cwd_missing", "other_repository", "relocated", "branch", "head",
                            "baseline_unreadable", "git_refused"})
OUTSIDE_GIT = ("outside git: no repository was recorded or found, so branch, HEAD and repository "
               "identity were not checked")


def _validate(replayed: Replayed, workspace: Workspace) -> tuple[list[Difference], list[Invalidation]]:
    """Baseline first; only when it does not block are the other subsystems validated."""
    try:
        baseline = replayed.state.get(Worktree).validate(workspace, {})
    except Exception as exc:  # noqa: BLE001 - a crafted state: nothing to compare, no traceback
        baseline = Findings(differences=[Difference(
            "baseline_unreadable", None, workspace.root,
            f"the recorded baseline is unreadable: {exc!r}")])
    if any(d.kind in BLOCKING_KINDS for d in baseline.differences):
        return list(baseline.differences), []
    differences, invalidations = replayed.state.validate(workspace)
    rest = [d for d in differences if d.kind not in BASELINE_KINDS]
    return list(baseline.differences) + rest, invalidations


def _damage(replayed: Replayed) -> list[dict[str, Any]]:
    return replayed.damaged + [
        {"session_id": None, "line": 0, "kind": u["status"], "reason": u["path"]}
        for u in replayed.unreadable]


def _notes(replayed: Replayed, workspace: Workspace) -> list[str]:
    worktree = replayed.state.get(Worktree).snapshot()
    if workspace.exists and workspace.git_note is None and workspace.baseline is None \
            and worktree.get("baseline") is None:
        return [OUTSIDE_GIT]
    return []


def assess(replayed: Replayed, workspace: Workspace, *, thread_id: str) -> Report:
    """The report a resume of `thread_id` here would give."""
    damaged = _damage(replayed)
    if not replayed.rollouts:
        return Report(verdict="blocked", thread_id=thread_id, restored_to_seq=-1,
                      workspace=workspace.root, damaged=damaged, choices=["export"])
    differences, invalidations = _validate(replayed, workspace)
    verdict = verdict_of(differences, damaged=bool(damaged))
    state = replayed.state
    ops = state.summaries()["operations"]
    return Report(
        verdict=verdict, thread_id=thread_id, restored_to_seq=replayed.restored_to_seq,
        workspace=workspace.root, agent=replayed.agent,
        title=status_summary(state, replayed.meta)["title"],
        differences=differences, invalidated=invalidations, subsystems=state.reports(),
        in_doubt_operations=ops["in_doubt_operations"],
        duplicate_operations=ops["duplicate_deliveries"] + [
            {"status": "redelivered line", **d} for d in replayed.redelivered],
        rerun_verifier=any(i.subsystem == "verifier" for i in invalidations),
        quarantined=[{"session_id": r.meta["session_id"] if r.meta else None, "path": str(r.path),
                      "offset": r.tail.offset, "bytes": r.tail.length, "reason": r.tail.reason,
                      "action": "would quarantine"}
                     for r in replayed.rollouts if r.tail is not None],
        damaged=damaged, notes=_notes(replayed, workspace),
        facts=replayed.facts, choices=list(CHOICES[verdict]),
    )
