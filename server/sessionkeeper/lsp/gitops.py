"""Git for the editor surface: where git keeps its state, HEAD now, the files two commits differ
in, uncommitted changes, and the one command that changes the workspace: the switch back the user
confirmed.

Invariants: reads go through `recovery.gitrun` (read-only, no optional locks, no prompts) and
answer None or an empty value when git fails; `checkout` runs only the argv of a `SwitchBackPlan`
that `switch_back_plan` found safe (nothing uncommitted to lose, the branch not held by another
worktree), never with --force.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass, field
from typing import Literal

from ..events import GitBaseline
from ..recovery import gitrun
from ..recovery.advice import advise

UNCOMMITTED_LISTED = 20
Refusal = Literal["nothing_to_switch", "missing_branch", "other_worktree", "uncommitted", "failed"]
"""Why a switch back did not run."""


@dataclass(frozen=True)
class GitDirs:
    """Where git keeps the state of a worktree: its own dir (HEAD, index) and the common dir (refs)."""

    top: str
    git_dir: str
    common_dir: str


def git_dirs(path: str) -> GitDirs | None:
    """The git directories of the worktree holding `path`; None outside git."""
    out = gitrun.value(path, "rev-parse", "--path-format=absolute", "--show-toplevel",
                       "--git-dir", "--git-common-dir")
    lines = (out or "").splitlines()
    if len(lines) != 3:
        return None
    top, git_dir, common = (os.path.realpath(line) for line in lines)
    return GitDirs(top, git_dir, common)


@dataclass(frozen=True)
class Head:
    """What is checked out: the branch (None when detached) and the commit (None before any)."""

    branch: str | None
    commit: str | None


def head(path: str) -> Head | None:
    """HEAD of the worktree holding `path`; None outside git."""
    commit = gitrun.value(path, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    branch = gitrun.branch(path)
    if commit is None and branch is None and git_dirs(path) is None:
        return None
    return Head(branch=branch, commit=commit)


def _names(path: str, *args: str) -> set[str]:
    done = gitrun.run(path, *args)
    return {p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p} \
        if done.ok else set()


def changed_between(path: str, old: str, new: str) -> set[str]:
    """Paths (relative to `path`, POSIX) whose content differs between two commits."""
    return _names(path, "diff", "--name-only", "--relative", "--no-renames", "-z", old, new, "--")


def modified_since(path: str, commit: str, paths: list[str]) -> set[str]:
    """Those of `paths` whose working copy differs from `commit` (staged or not)."""
    if not paths:
        return set()
    return _names(path, "diff", "--name-only", "--relative", "--no-renames", "-z", commit, "--",
                  *paths)


def uncommitted(path: str) -> list[str]:
    """Tracked files with uncommitted changes (what a checkout could lose or carry along)."""
    done = gitrun.run(path, "status", "--porcelain=v1", "-z", "--untracked-files=no")
    entries = done.stdout.decode("utf-8", "surrogateescape").split("\0") if done.ok else []
    return [e[3:] for e in entries if len(e) > 3]


@dataclass(frozen=True)
class SwitchBackPlan:
    """Whether the switch back can run here without losing anything, and if not, why."""

    branch: str | None
    command: str | None  # for display, e.g. "git checkout fix/payment"
    refused: Refusal | None = None
    message: str = ""
    worktree: str | None = None
    uncommitted: list[str] = field(default_factory=list)


def switch_back_plan(path: str, recorded: GitBaseline | None) -> SwitchBackPlan:
    """Check a switch back to the recorded branch (or HEAD) in the worktree holding `path`."""
    if recorded is None:
        return SwitchBackPlan(None, None, "nothing_to_switch", "the thread was recorded outside git")
    branch, now = recorded.branch, head(path)
    if now is not None and now.branch == branch and branch is not None:
        moved = f"; only HEAD moved ({(recorded.head or '-')[:7]} → {(now.commit or '-')[:7]})" \
            if recorded.head != now.commit else ""
        return SwitchBackPlan(branch, None, "nothing_to_switch", f"{branch} is checked out{moved}")
    advice = advise(recorded, root=path)
    if advice.command is None:
        refusal: Refusal = "other_worktree" if advice.worktree else "missing_branch"
        return SwitchBackPlan(branch, None, refusal, advice.note or "there is no way back here",
                              worktree=advice.worktree)
    dirty = uncommitted(path)
    if dirty:
        shown = ", ".join(dirty[:UNCOMMITTED_LISTED]) + (" …" if len(dirty) > UNCOMMITTED_LISTED
                                                         else "")
        return SwitchBackPlan(branch, advice.command, "uncommitted",
                              f"{len(dirty)} file(s) have uncommitted changes ({shown}); "
                              "commit or stash them first", uncommitted=dirty)
    note = f" ({advice.note})" if advice.note else ""
    return SwitchBackPlan(branch, advice.command, None, f"runs `{advice.command}`{note}")


def checkout(path: str, plan: SwitchBackPlan) -> str | None:
    """Run a safe plan's git command in `path`; None on success, else git's message."""
    if plan.refused is not None or not plan.command:
        return plan.message or "nothing to run"
    argv = shlex.split(plan.command)
    if argv[:1] != ["git"] or "--force" in argv or "-f" in argv:
        return f"refusing to run {plan.command!r}"
    env = gitrun.environment({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    try:
        done = subprocess.run([*argv[:1], "-c", "advice.detachedHead=false", *argv[1:]], cwd=path,
                              env=env, capture_output=True, text=True, check=False)
    except OSError as exc:
        return f"cannot run git: {exc}"
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    return " ".join(line.removeprefix("error: ").removeprefix("fatal: ") for line in lines) \
        or f"{plan.command} failed (exit {done.returncode})"
