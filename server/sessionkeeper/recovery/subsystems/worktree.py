"""The workspace baseline the session was recorded in (cwd, repository, branch, HEAD, dirty).

Besides the baseline: the commits an agent's log names at the place the session started
(`data.commits` of its session_meta: Claude Code's "Recent commits"), kept across later baseline
records, since they are what a baseline without root commits can be identified by
(`recovery.identity`).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...events import GitBaseline, RepoIdentity
from ..comparison import baseline_differences
from .base import Difference, Findings, Record, Subsystem, Workspace, register

if TYPE_CHECKING:  # a check imports it when it asks (a hook's fold never does)
    from ..identity import NamedCommit

_FIELDS = ("repo_root", "worktree", "identity", "branch", "head", "dirty")


def baseline_of(raw: object) -> GitBaseline | None:
    """A stored baseline (a dict, or None outside git) as a GitBaseline; ValueError if malformed."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError(f"a baseline is an object, not {type(raw).__name__}")
    identity = raw.get("identity")
    if identity is not None and not isinstance(identity, dict):
        raise ValueError("baseline.identity is not an object")
    for name, value in [*((k, raw.get(k)) for k in _FIELDS if k != "identity"),
                        *(("identity.remote_url", (identity or {}).get("remote_url")),)]:
        if value is not None and not isinstance(value, str):
            raise ValueError(f"baseline.{name} is not a string")
    roots = (identity or {}).get("root_commits", [])
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        raise ValueError("baseline.identity.root_commits is not a list of strings")
    try:
        fields = {k: raw.get(k) for k in _FIELDS if k != "identity"}
        return GitBaseline(**fields, identity=RepoIdentity(**identity) if identity else None)
    except TypeError as exc:
        raise ValueError(f"baseline: {exc}") from None


@register
class Worktree(Subsystem):
    """Recorded cwd and GitBaseline; the newest `session_meta` (or `baseline` record) wins."""

    name = "worktree"
    handles = frozenset({"session_meta", "baseline"})

    def __init__(self) -> None:
        self.state: dict[str, Any] = {"cwd": None, "baseline": None, "seq": None, "unknown": [],
                                      "commits": None}

    def apply(self, record: Record) -> None:
        """Take the cwd and baseline of a session_meta, or a refreshed baseline."""
        if record["type"] == "session_meta":
            self.state["cwd"] = record.get("cwd")
            self.state["baseline"] = copy.deepcopy(record.get("baseline"))
            named = (record.get("data") or {}).get("commits")
            self.state["commits"] = copy.deepcopy(named) if isinstance(named, dict) else None
        else:
            self.state["baseline"] = {k: copy.deepcopy(record.get(k)) for k in _FIELDS}
        self.state["seq"] = record.get("seq")
        # fields the record's source could not state (an agent's log has no HEAD, say)
        self.state["unknown"] = list((record.get("data") or {}).get("unknown", []))

    def snapshot(self) -> dict[str, Any]:
        """Return cwd, baseline (a GitBaseline dict or None) and the seq it was recorded at."""
        return copy.deepcopy(self.state)

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.state = copy.deepcopy(state)

    def recorded(self) -> GitBaseline | None:
        """Return the recorded baseline, or None outside git; ValueError if it is malformed."""
        if "baseline" not in self.state:  # a crafted snapshot's state: not "outside git"
            raise ValueError("the worktree state has no baseline")
        return baseline_of(self.state["baseline"])

    def named_commits(self) -> list[NamedCommit]:
        """The commits the recorded baseline's history holds, as its log names them: the recorded
        HEAD, then those listed where the baseline was taken (newest first); [] when unreadable."""
        from ..identity import NamedCommit

        try:
            baseline = self.recorded()
        except ValueError:
            return []
        if baseline is None:
            return []
        out = [NamedCommit(baseline.head)] if isinstance(baseline.head, str) and baseline.head \
            and "head" not in self.state.get("unknown", ()) else []
        named = self.state.get("commits")
        if not isinstance(named, dict) or not isinstance(named.get("cwd"), str) \
                or not isinstance(named.get("commits"), list):
            return out
        where = {os.path.normpath(p) for p in (baseline.worktree, baseline.repo_root) if p}
        if os.path.normpath(named["cwd"]) not in where:
            return out  # listed at another place than the baseline in force
        return out + [NamedCommit(c["commit"], c.get("subject") if isinstance(c.get("subject"), str)
                                  else None)
                      for c in named["commits"] if isinstance(c, dict)
                      and isinstance(c.get("commit"), str)]

    def set_identity(self, identity: RepoIdentity) -> None:
        """Give the recorded baseline an identity (rebuilt: `recovery.identity.reidentify`)."""
        if isinstance(self.state.get("baseline"), dict):
            self.state["baseline"]["identity"] = {"root_commits": list(identity.root_commits),
                                                  "remote_url": identity.remote_url}

    def recorded_branch(self) -> str | None:
        """The recorded branch, or None (detached, outside git, or unreadable)."""
        try:
            baseline = self.recorded()
        except ValueError:
            return None
        return baseline.branch if baseline else None

    def validate(self, workspace: Workspace, deps: Mapping[str, Subsystem]) -> Findings:
        """Compare the recorded baseline with the workspace (the first check of a resume)."""
        try:
            recorded = self.recorded()
        except ValueError as exc:
            return Findings(differences=[Difference("baseline_unreadable", None, workspace.root,
                                                    f"the recorded baseline is unreadable: {exc}")])
        if recorded is None and "workspace" in self.state.get("unknown", ()):
            return Findings()  # bound to no workspace (a Hermes chat): anywhere is the same
        if workspace.git_note is not None:  # git will not read it: nothing can be compared
            return Findings(differences=[Difference("git_refused", self.state["cwd"],
                                                    workspace.root, workspace.git_note)])
        # a field never recorded (an agent's log): nothing to differ from
        diffs = baseline_differences(recorded, workspace.baseline, cwd_exists=workspace.exists,
                                     unrecorded={"head", "branch"}.intersection(
                                         self.state.get("unknown", ())))
        cwd = self.state["cwd"]
        settled = any(d.kind in ("relocated", "other_repository", "cwd_missing") for d in diffs)
        if not settled and cwd and os.path.realpath(cwd) != os.path.realpath(workspace.root):
            where = ("another directory, outside git" if workspace.baseline is None
                     else "another directory of the same repository")
            diffs = [Difference("relocated", cwd, workspace.root, where), *diffs]
        if not workspace.exists:
            diffs = [Difference("cwd_missing", cwd, workspace.root, diffs[0].detail)]
        return Findings(differences=diffs)

    def headline(self) -> str:
        """Branch and HEAD recorded, and where."""
        try:
            baseline = self.recorded()
        except ValueError:
            return "recorded baseline unreadable"
        if baseline is None:
            return f"{self.state['cwd']} (outside git)"
        head = (baseline.head or "no commits")[:10]
        return f"{baseline.branch or 'detached HEAD'} @ {head} in {self.state['cwd']}"
