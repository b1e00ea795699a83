"""Git for the editor surface: where git keeps its state, HEAD now, commit subjects, worktrees,
uncommitted changes, the files two commits differ in, and the one command that changes the
workspace: a checkout the user confirmed (switch back).

Invariants: every command runs with optional locks off and no prompt; every read returns None (or
an empty value) instead of raising when git fails; `checkout` runs only after `switch_back_plan`
found nothing it would lose, and never with --force. GitPython is imported on first use.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal

UNCOMMITTED_LISTED = 20
Refusal = Literal["nothing_to_switch", "missing_branch", "other_worktree", "uncommitted", "failed"]
"""Why a switch back did not run."""


def _runner(path: str) -> Any:
    import git  # lazy: GitPython costs start-up time

    runner = git.Git(path)
    runner.update_environment(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    return runner


def run(path: str, *args: str, strip: bool = True) -> str | None:
    """Run `git args` in `path`; its stdout, or None when git fails or is missing."""
    import git

    if not os.path.isdir(path):
        return None
    try:
        return str(_runner(path).execute(["git", *args], strip_newline_in_stdout=strip))
    except (git.GitCommandError, git.GitCommandNotFound, OSError):
        return None


@dataclass(frozen=True)
class GitDirs:
    """Where git keeps the state of a worktree: its own dir (HEAD, index) and the common dir (refs)."""

    top: str
    git_dir: str
    common_dir: str


def git_dirs(path: str) -> GitDirs | None:
    """The git directories of the worktree holding `path`; None outside git."""
    out = run(path, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
    if not out:
        return None
    lines = out.splitlines()
    if len(lines) != 3:
        return None
    top, git_dir, common = lines
    common = common if os.path.isabs(common) else os.path.join(path, common)
    return GitDirs(os.path.realpath(top), os.path.realpath(git_dir), os.path.realpath(common))


@dataclass(frozen=True)
class Head:
    """What is checked out: the branch (None when detached) and the commit (None before any)."""

    branch: str | None
    commit: str | None


def head(path: str) -> Head | None:
    """HEAD of the worktree holding `path`; None outside git."""
    commit = run(path, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    branch = run(path, "symbolic-ref", "--short", "-q", "HEAD")
    if commit is None and branch is None and git_dirs(path) is None:
        return None
    return Head(branch=branch or None, commit=commit or None)


def subject(path: str, commit: str) -> str | None:
    """The first line of a commit's message; None when the commit is not in this repository."""
    return run(path, "log", "-1", "--format=%s", commit, "--") or None


def describe_move(path: str, old: str, new: str) -> str:
    """'abc1234 “subject” → def5678 “subject” (2 commits ahead, 1 behind)' for a HEAD change."""
    def one(commit: str) -> str:
        text = subject(path, commit)
        return f"{commit[:7]} “{text}”" if text else f"{commit[:7]} (not in this repository)"

    line = f"{one(old)} → {one(new)}"
    counts = run(path, "rev-list", "--left-right", "--count", f"{old}...{new}")
    parts = (counts or "").split()
    if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
        behind, ahead = int(parts[0]), int(parts[1])
        said = [f"{n} commit{'s' if n != 1 else ''} {word}"
                for n, word in ((ahead, "ahead"), (behind, "behind")) if n]
        if said:
            line += f" ({', '.join(said)})"
    return line


def changed_between(path: str, old: str, new: str) -> set[str]:
    """Paths (relative to `path`, POSIX) whose content differs between two commits."""
    out = run(path, "diff", "--name-only", "--relative", "--no-renames", "-z", old, new, "--",
              strip=False)
    return {p for p in (out or "").split("\0") if p}


def modified_since(path: str, commit: str, paths: list[str]) -> set[str]:
    """Those of `paths` whose working copy differs from `commit` (staged or not)."""
    if not paths:
        return set()
    out = run(path, "diff", "--name-only", "--relative", "--no-renames", "-z", commit, "--",
              *paths, strip=False)
    return {p for p in (out or "").split("\0") if p}


def uncommitted(path: str) -> list[str]:
    """Tracked files with uncommitted changes (what a checkout could lose or carry along)."""
    out = run(path, "status", "--porcelain=v1", "-z", "--untracked-files=no", strip=False)
    entries = [e for e in (out or "").split("\0") if e]
    return [e[3:] for e in entries if len(e) > 3]


def worktree_of_branch(path: str, branch: str) -> str | None:
    """The other worktree that has `branch` checked out, if any (git refuses a second checkout)."""
    out = run(path, "worktree", "list", "--porcelain")
    dirs = git_dirs(path)
    current: str | None = None
    for line in (out or "").splitlines():
        if line.startswith("worktree "):
            current = os.path.realpath(line[len("worktree "):])
        elif line == f"branch refs/heads/{branch}" and current and (
                dirs is None or current != dirs.top):
            return current
    return None


def branch_exists(path: str, branch: str) -> bool:
    """True when `branch` is a local branch."""
    return run(path, "rev-parse", "--verify", "-q", f"refs/heads/{branch}") is not None


@dataclass(frozen=True)
class SwitchBackPlan:
    """Whether `git checkout <branch>` can run here without losing anything, and if not, why."""

    branch: str | None
    command: str | None
    refused: Refusal | None = None
    message: str = ""
    worktree: str | None = None
    uncommitted: list[str] = field(default_factory=list)


def switch_back_plan(path: str, branch: str | None) -> SwitchBackPlan:
    """Check a switch back to `branch` in the worktree holding `path` before anything runs."""
    if not branch:
        return SwitchBackPlan(None, None, "nothing_to_switch",
                              "the thread was not recorded on a branch")
    command = f"git checkout {branch}"
    now = head(path)
    if now is not None and now.branch == branch:
        return SwitchBackPlan(branch, command, "nothing_to_switch", f"{branch} is checked out")
    if not branch_exists(path, branch):
        return SwitchBackPlan(branch, command, "missing_branch",
                              f"there is no local branch {branch} any more")
    other = worktree_of_branch(path, branch)
    if other is not None:
        return SwitchBackPlan(branch, command, "other_worktree",
                              f"{branch} is checked out in another worktree: {other}",
                              worktree=other)
    dirty = uncommitted(path)
    if dirty:
        shown = ", ".join(dirty[:UNCOMMITTED_LISTED]) + (" …" if len(dirty) > UNCOMMITTED_LISTED
                                                         else "")
        return SwitchBackPlan(branch, command, "uncommitted",
                              f"{len(dirty)} file(s) have uncommitted changes ({shown}); "
                              "commit or stash them first", uncommitted=dirty)
    return SwitchBackPlan(branch, command, None, f"runs `{command}` in {path}")


def checkout(path: str, branch: str) -> str | None:
    """Run `git checkout <branch>` (no --force); None on success, else git's message."""
    import git

    try:
        _runner(path).execute(["git", "checkout", "-q", branch])
    except git.GitCommandError as exc:
        text = str(exc.stderr or exc).strip()
        return text.removeprefix("stderr:").strip(" '\n") or "git checkout failed"
    return None
