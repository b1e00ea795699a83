"""Compare a recorded git baseline with the workspace's now; decide the verdict.

Pure functions of two baselines (no git runs here): the same repository (root commits, then the
origin URL, then the path), relocation, branch and HEAD; a listing's estimate and the resume
check decide with the same ones.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..events import GitBaseline, RepoIdentity

if TYPE_CHECKING:
    from .difference import Difference
    from .report import Verdict

BLOCKING_KINDS = frozenset({"cwd_missing", "other_repository", "baseline_unreadable",
                            "git_refused"})
"""Difference kinds after which the session cannot continue here (verdict `blocked`)."""


def _norm_url(url: str) -> str:
    url = url.strip().rstrip("/")
    return url[:-4] if url.endswith(".git") else url


def same_repository(a: RepoIdentity | None, b: RepoIdentity | None) -> bool | None:
    """True if both share a root commit (else the same origin URL); None when it cannot be told."""
    if a is None or b is None:
        return None
    if a.root_commits and b.root_commits:
        return bool(set(a.root_commits) & set(b.root_commits))
    if a.remote_url and b.remote_url:
        return _norm_url(a.remote_url) == _norm_url(b.remote_url)
    return None


def _real(path: str | None) -> str | None:
    return os.path.realpath(path) if path else None


def same_place(a: str | None, b: str | None) -> bool:
    """True when two paths name one place (equal names need no realpath's system calls)."""
    return a == b or _real(a) == _real(b)


def compare(
    recorded: GitBaseline | None, current: GitBaseline | None, *, cwd_exists: bool
) -> list[Difference]:
    """List how the current baseline differs from the recorded one (empty when identical)."""
    from .difference import Difference

    if not cwd_exists:
        where = recorded.worktree if recorded else None
        return [Difference("cwd_missing", where, None, "the working directory no longer exists")]
    if recorded is None and current is None:
        return []
    if recorded is None or current is None:
        detail = "now outside any git repository" if current is None else "recorded outside git"
        return [Difference("other_repository", _ident(recorded), _ident(current), detail)]
    same = same_repository(recorded.identity, current.identity)
    detail = "no common root commit"
    if same is None:  # no commits and no remote on one side: fall back to the path
        same = same_place(recorded.repo_root, current.repo_root)
        detail = "another path, and no root commit or origin URL on both sides to compare"
    elif not _roots(recorded) or not _roots(current):
        detail = "another origin URL"
    if not same:
        return [Difference("other_repository", _ident(recorded), _ident(current), detail)]
    diffs: list[Difference] = []
    if not same_place(recorded.repo_root, current.repo_root):
        diffs.append(Difference("relocated", recorded.repo_root, current.repo_root,
                                "same repository at another path"))
    elif not same_place(recorded.worktree, current.worktree):
        diffs.append(Difference("relocated", recorded.worktree, current.worktree,
                                "another worktree of the same repository"))
    if recorded.branch != current.branch:
        diffs.append(Difference("branch", recorded.branch, current.branch,
                                "detached HEAD" if current.branch is None else ""))
    if recorded.head != current.head:
        diffs.append(Difference("head", recorded.head, current.head))
    return diffs


def _roots(baseline: GitBaseline) -> bool:
    return bool(baseline.identity and baseline.identity.root_commits)


def _ident(baseline: GitBaseline | None) -> dict[str, Any] | None:
    """Return the part of a baseline that names the repository (for a difference report)."""
    if baseline is None:
        return None
    ident = dataclasses.asdict(baseline.identity) if baseline.identity else None
    return {"repo_root": baseline.repo_root, "identity": ident}


def blocks(difference: Difference) -> bool:
    """True if this difference means the session cannot continue here."""
    return difference.kind in BLOCKING_KINDS


def baseline_differences(recorded: GitBaseline | None, current: GitBaseline | None, *,
                         cwd_exists: bool, unrecorded: Iterable[str] = ()) -> list[Difference]:
    """`compare`, less the differences in fields the recorded baseline never stated
    (`unrecorded`: "head", "branch"; an agent's log may have neither): the check's decision,
    which a listing's estimate makes too."""
    diffs = compare(recorded, current, cwd_exists=cwd_exists)
    skip = frozenset(unrecorded)
    return [d for d in diffs if d.kind not in skip] if skip else diffs


def verdict_of(differences: Iterable[Difference], *, damaged: bool = False) -> Verdict:
    """Return `blocked` (a blocking kind or middle damage), `drift` (any difference) or `ok`."""
    diffs = list(differences)
    if damaged or any(blocks(d) for d in diffs):
        return "blocked"
    return "drift" if diffs else "ok"
