"""Recognising a checkout as a checkout: which changed files a move of HEAD explains.

When HEAD moves from one commit to another while files change in the same batch, a changed file
is the checkout's (not a user edit) when the two commits differ in it and its working copy now
equals the new commit. Anything else changed in the batch (an edit on top, a file the checkout
did not touch) is still an edit. The move itself becomes one `git_moved` record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from . import gitops
from .gitops import Head


def explained_by_move(root: str, old: Head | None, new: Head | None,
                      paths: Iterable[str]) -> set[str]:
    """Those of `paths` (relative to `root`) that the move of HEAD from `old` to `new` wrote."""
    if old is None or new is None or not old.commit or not new.commit or old.commit == new.commit:
        return set()
    between = gitops.changed_between(root, old.commit, new.commit)
    candidates = sorted(p for p in set(paths) if p in between)
    return set(candidates) - gitops.modified_since(root, new.commit, candidates)


def git_moved_event(old: Head | None, new: Head | None, *, explained: Iterable[str],
                    seen: Callable[[str], bool]) -> dict[str, Any]:
    """The `git_moved` record of a move; `seen(path)`: the session recorded that file before."""
    files = sorted(explained)
    event: dict[str, Any] = {"type": "git_moved", "files": len(files),
                             "touched": [p for p in files if seen(p)]}
    for key, value in (("from_branch", old.branch if old else None),
                       ("to_branch", new.branch if new else None),
                       ("from_head", old.commit if old else None),
                       ("to_head", new.commit if new else None)):
        if value is not None:
            event[key] = value
    return event
