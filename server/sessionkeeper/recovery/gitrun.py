"""The one way Session Keeper runs git: read-only commands, no optional locks, no prompts.

Every call returns what git printed and why it failed; nothing here moves a ref or touches the
working tree. git finds the repository from the cwd alone: the repository-local variables of our
environment (an agent's GIT_DIR) are never passed on (`environment`). `GitRefused` carries git's
own reason when it will not read a repository (dubious ownership, a bare repository, a `.git`
directory given as the workspace) — never mistaken for "outside git".
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from typing import NamedTuple

from ..errors import GitRefused
from .git_env import LOCAL_ENV, environment

__all__ = ["FRESH_S", "LOCAL_ENV", "GitResult", "branch", "branch_of", "environment", "look_ahead",
           "refusal", "run", "started", "value"]

_OUTSIDE = "not a git repository"


class GitResult(NamedTuple):  # not a dataclass: ~5x cheaper to create at import (issue 13)
    """What one git command did."""

    returncode: int
    stdout: bytes
    stderr: str

    @property
    def ok(self) -> bool:
        """True when git exited 0."""
        return self.returncode == 0

    def text(self) -> str:
        """stdout decoded, without the trailing newline."""
        return self.stdout.decode("utf-8", "surrogateescape").rstrip("\n")


FRESH_S = 2.0
"""How old a command started by `look_ahead` may be when `started` takes it (a command's
process takes it within ~0.2 s of starting it)."""
_ahead: dict[tuple[str, tuple[str, ...]], tuple[float, Callable[[], GitResult]]] = {}


def look_ahead(cwd: str | os.PathLike[str], *args: str, timeout_s: float | None = None) -> None:
    """Start `git args...` in `cwd` now, for this process's next `started` of the same command
    in the same directory: git runs while the process loads the code that will ask. Only for a
    command's short-lived process (the server never looks ahead: it would keep stale answers)."""
    key = (os.path.realpath(cwd), args)
    if key not in _ahead and os.path.isdir(key[0]):
        _ahead[key] = (time.monotonic(), _start(cwd, args, None, timeout_s))


def run(cwd: str | os.PathLike[str], *args: str, stdin: bytes | None = None) -> GitResult:
    """Run `git args...` in `cwd`; a missing git or directory is a failed result, never a raise."""
    return started(cwd, *args, stdin=stdin)()


def started(cwd: str | os.PathLike[str], *args: str, stdin: bytes | None = None,
            timeout_s: float | None = None) -> Callable[[], GitResult]:
    """Start `git args...` in `cwd` now (or take the same command started there by `look_ahead`
    at most FRESH_S ago); the call returned waits for its result (the caller works meanwhile), at
    most `timeout_s` (then git is killed). A missing git or directory, or a timeout, is a failed
    result, never a raise."""
    if _ahead and stdin is None:
        at, waiting = _ahead.pop((os.path.realpath(cwd), args), (0.0, None))
        if waiting is not None and time.monotonic() - at <= FRESH_S:
            return waiting
    return _start(cwd, args, stdin, timeout_s)


def _start(cwd: str | os.PathLike[str], args: tuple[str, ...], stdin: bytes | None,
           timeout_s: float | None) -> Callable[[], GitResult]:
    try:
        process = subprocess.Popen(["git", *args], cwd=cwd, env=environment(),
                                   stdin=None if stdin is None else subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except (FileNotFoundError, NotADirectoryError, PermissionError) as exc:
        failed = GitResult(127, b"", f"cannot run git in {cwd}: {exc}")
        return lambda: failed

    def result() -> GitResult:
        try:
            out, err = process.communicate(stdin, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()  # not its pipes: a child git started may hold them open
            return GitResult(124, b"", f"git {' '.join(args[:4])} took over {timeout_s:g} s in {cwd}")
        return GitResult(process.returncode, out, err.decode("utf-8", "replace"))
    return result


def value(cwd: str | os.PathLike[str], *args: str) -> str | None:
    """The stripped output of a git query, or None when git answers no (or fails)."""
    done = run(cwd, *args)
    return done.text().strip() or None if done.ok else None


def branch_of(ref: str | None) -> str | None:
    """The branch a symbolic ref of HEAD names (`refs/heads/x` -> `x`), None when detached.
    Never `--abbrev-ref` / `symbolic-ref --short`: they answer `heads/x` once a tag `x` exists."""
    return ref[len("refs/heads/"):] if ref and ref.startswith("refs/heads/") else None


def branch(cwd: str | os.PathLike[str]) -> str | None:
    """The branch checked out in `cwd` (unborn included), None when detached or outside git."""
    return branch_of(value(cwd, "symbolic-ref", "-q", "HEAD"))


def refusal(done: GitResult, where: str) -> GitRefused | None:
    """GitRefused with git's reason when a failure is git refusing `where` (not "outside git")."""
    if done.ok or _OUTSIDE in done.stderr:
        return None
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    reason = " ".join(line.removeprefix("fatal: ") for line in lines[:1]) or "git failed"
    if "dubious ownership" in done.stderr:
        reason += (f" — git refuses a repository owned by another user; if you trust it, run "
                   f"`git config --global --add safe.directory {where}`")
    elif "must be run in a work tree" in done.stderr:
        reason += " — a bare repository or a .git directory is not a workspace; open its work tree"
    return GitRefused(f"git will not read {where}: {reason}")
