"""How to get back to the recorded branch — advice that works, or none (never a command that fails).

Read-only: it asks git which branches exist and which worktrees hold them; it never checks out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..events import GitBaseline
from . import gitrun


@dataclass(frozen=True)
class SwitchBack:
    """The command that restores the recorded checkout, or why there is none, or where it is."""

    command: str | None  # e.g. "git checkout fix/payment"
    note: str | None  # why the plain checkout would not work, and what to do instead
    worktree: str | None  # the recorded branch is checked out there: open that worktree


def _checked_out_elsewhere(root: str, branch: str) -> str | None:
    listing = gitrun.run(root, "worktree", "list", "--porcelain")
    if not listing.ok:
        return None
    path = None
    for line in listing.text().splitlines():
        if line.startswith("worktree "):
            path = line[len("worktree "):]
        elif line == f"branch refs/heads/{branch}" and path is not None \
                and os.path.realpath(path) != os.path.realpath(root):
            return path
    return None


def advise(recorded: GitBaseline, *, root: str) -> SwitchBack:
    """Advice to get from the workspace at `root` back to `recorded`'s branch (or HEAD)."""
    head = recorded.head
    if recorded.branch is None:
        if head is None:
            return SwitchBack(None, "the session ran on a repository without commits", None)
        return SwitchBack(f"git checkout --detach {head}",
                          f"the session ran on a detached HEAD at {head[:10]}", None)
    branch = recorded.branch
    if gitrun.value(root, "rev-parse", "--verify", "-q", f"refs/heads/{branch}") is None:
        note = f"branch {branch} no longer exists here (renamed or deleted)"
        if head and gitrun.value(root, "cat-file", "-t", head) == "commit":
            return SwitchBack(f"git switch -c {branch} {head}",
                              f"{note}; the session's HEAD {head[:10]} is still here", None)
        return SwitchBack(None, f"{note}, and the session's HEAD is not in this repository", None)
    elsewhere = _checked_out_elsewhere(root, branch)
    if elsewhere is not None:
        return SwitchBack(None, f"branch {branch} is checked out in the worktree {elsewhere}: "
                                "open that worktree instead", elsewhere)
    return SwitchBack(f"git checkout {branch}", None, None)
