"""What to tell the user about a git difference: how HEAD moved, and how to get back.

Advice works or is not given (never a command that fails). Read-only: it asks git which branches
exist, which worktrees hold them and which commits lie between two HEADs; it never checks out.
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


def head_moved(root: str, recorded: str, current: str | None, *, shown: int = 5) -> str:
    """How HEAD moved since the recording, in words, with the subjects of new commits."""
    if current is None:
        return "no commit is checked out now"
    if gitrun.value(root, "cat-file", "-t", recorded) != "commit":
        return f"the recorded HEAD {recorded[:10]} is not in this repository"
    if gitrun.run(root, "merge-base", "--is-ancestor", recorded, current).ok:
        log = gitrun.run(root, "log", "--format=%h %s", f"{recorded}..{current}")
        lines = log.text().splitlines() if log.ok else []
        more = f" (+{len(lines) - shown} more)" if len(lines) > shown else ""
        return (f"{len(lines)} commit(s) ahead of the recorded HEAD: "
                + "; ".join(lines[:shown]) + more)
    if gitrun.run(root, "merge-base", "--is-ancestor", current, recorded).ok:
        log = gitrun.run(root, "log", "--format=%h %s", f"{current}..{recorded}")
        lines = log.text().splitlines() if log.ok else []
        more = f" (+{len(lines) - shown} more)" if len(lines) > shown else ""
        return (f"HEAD moved back {len(lines)} commit(s); the checkout lacks: "
                + "; ".join(lines[:shown]) + more)
    return (f"HEAD moved to another line of history: recorded {_commit(root, recorded)}, "
            f"now {_commit(root, current)}")


def _commit(root: str, commit: str) -> str:
    """'abc1234 “subject”' of a commit."""
    subject = gitrun.value(root, "log", "-1", "--format=%s", commit, "--")
    return f"{commit[:7]} “{subject}”" if subject else commit[:7]
