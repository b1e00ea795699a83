"""The workspace baseline the session was recorded in (cwd, repository, branch, HEAD, dirty)."""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from typing import Any

from .base import Difference, Findings, Record, Subsystem, Workspace, register


@register
class Worktree(Subsystem):
    """Recorded cwd and GitBaseline; the newest `session_meta` (or `baseline` record) wins."""

    name = "worktree"
    # "baseline": a mid-session refresh of the GitBaseline, folded if such a record type is added
    handles = frozenset({"session_meta", "baseline"})

    def __init__(self) -> None:
        self.state: dict[str, Any] = {"cwd": None, "baseline": None, "seq": None, "unknown": []}

    def apply(self, record: Record) -> None:
        """Take the cwd and baseline of a session_meta, or a refreshed baseline."""
        if record["type"] == "session_meta":
            self.state["cwd"] = record.get("cwd")
            self.state["baseline"] = copy.deepcopy(record.get("baseline"))
        else:
            fields = ("repo_root", "worktree", "identity", "branch", "head", "dirty")
            self.state["baseline"] = {k: copy.deepcopy(record.get(k)) for k in fields}
        self.state["seq"] = record.get("seq")
        # fields the record's source could not state (an agent's log has no HEAD, say)
        self.state["unknown"] = list((record.get("data") or {}).get("unknown", []))

    def snapshot(self) -> dict[str, Any]:
        """Return cwd, baseline (a GitBaseline dict or None) and the seq it was recorded at."""
        return copy.deepcopy(self.state)

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.state = copy.deepcopy(state)

    def recorded(self) -> Any:
        """Return the recorded baseline as an `events.GitBaseline`, or None outside git."""
        from ...events import GitBaseline

        raw = self.state["baseline"]
        return GitBaseline.model_validate(raw, strict=False) if raw is not None else None

    def validate(self, workspace: Workspace, deps: Mapping[str, Subsystem]) -> Findings:
        """Compare the recorded baseline with the workspace (the first check of a resume)."""
        from ..baseline import compare

        diffs = compare(self.recorded(), workspace.baseline, cwd_exists=workspace.exists)
        if "head" in self.state.get("unknown", ()):  # never recorded: nothing to differ from
            diffs = [d for d in diffs if d.kind != "head"]
        cwd = self.state["cwd"]
        settled = any(d.kind in ("relocated", "other_repository", "cwd_missing") for d in diffs)
        if not settled and cwd and _real(cwd) != _real(workspace.root):
            where = ("another directory, outside git" if workspace.baseline is None
                     else "another directory of the same repository")
            diffs = [Difference("relocated", cwd, workspace.root, where), *diffs]
        if not workspace.exists:
            diffs = [Difference("cwd_missing", cwd, workspace.root, diffs[0].detail)]
        return Findings(differences=diffs)


def _real(path: str) -> str:
    return os.path.realpath(path)
