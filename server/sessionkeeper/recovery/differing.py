"""git's list of the files that differ in a workspace (modified, deleted, untracked, not ignored).

The listing costs about as much as `git status` (it stats the whole tree). A command process
that will need it — `sessionkeeper start`, an agent's start or shell-call hook — starts it first
(`look_ahead`), so git lists while Python imports and captures the baseline, and `listing` takes
that answer. A listing started more than `FRESH_S` ago is never used: it could miss changes made
since; one for another directory is never used either. Only for short-lived processes (a
long-lived server would keep a stale one).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from . import gitrun

ARGS = ("-c", "core.quotePath=false", "ls-files", "-z", "--modified", "--others",
        "--exclude-standard")
TIMEOUT_S = 30.0
FRESH_S = 2.0
"""How old a looked-ahead listing may be when it is taken (a command takes it within ~0.2 s)."""

_ahead: dict[str, tuple[float, Callable[[], gitrun.GitResult]]] = {}


def look_ahead(workspace: str | os.PathLike[str]) -> None:
    """Start listing `workspace` now, for this process's next `listing` of it."""
    real = os.path.realpath(workspace)
    if real not in _ahead and os.path.isdir(real):
        _ahead[real] = (time.monotonic(), gitrun.started(real, *ARGS, timeout_s=TIMEOUT_S))


def listing(workspace: str | os.PathLike[str]) -> bytes | None:
    """git's NUL-separated list of the differing files, None when git failed or timed out."""
    started, waited = _ahead.pop(os.path.realpath(workspace), (0.0, None))
    if waited is None or time.monotonic() - started > FRESH_S:
        waited = gitrun.started(workspace, *ARGS, timeout_s=TIMEOUT_S)
    done = waited()
    return done.stdout if done.ok else None
