"""Finding a repository by its identity, and rebuilding an identity a log never recorded.

A repository is known by its root commits (`comparison.same_repository`). Session Keeper's own
baselines record them; an agent's log does not (Claude Code records none, Codex only its HEAD's
SHA), and the index remembers them only for a cwd it saw while the repository was there — not for
a session first seen after its folder was renamed. What such a log does name are commits of the
recorded history (`Worktree.named_commits`): Codex's `git.commit_hash`, the short SHAs and
subjects of Claude Code's "Recent commits" at the session's start. A repository holding one of
them holds that history, so the root commits of that commit there are the recorded repository's:
the identity is rebuilt from the repository in question and compared like a recorded one.

Invariants: read-only git only (`gitrun`); a name is used only when it is hex (never an option
or a ref name); a short SHA counts only when git resolves it to one commit whose subject is the
recorded one; nothing is rebuilt when the baseline names a root commit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ..clock import utc_now_iso
from ..errors import GitRefused
from ..events import GitBaseline, RepoIdentity
from . import gitrun
from .baseline import identity_of, root_commits, toplevel
from .comparison import same_repository

if TYPE_CHECKING:
    from .replay import Replayed

_HEX = re.compile(r"[0-9a-f]{7,64}")
_MAX_CANDIDATES = 50
REBUILT_SOURCE = "rebuilt from the repository checked: the root commits of a commit the log names"


class NamedCommit(NamedTuple):
    """A commit of the recorded history as a log names it (a full or abbreviated SHA)."""

    commit: str
    subject: str | None = None  # its subject line, when the log gives it (a short SHA's check)


class RecordedWorktree(Protocol):
    """The worktree state as `reidentify` uses it (`subsystems.worktree.Worktree`)."""

    def recorded(self) -> GitBaseline | None:
        """The recorded baseline, or None outside git; ValueError if it is malformed."""

    def named_commits(self) -> list[NamedCommit]:
        """The commits of the recorded history its log names."""

    def set_identity(self, identity: RepoIdentity) -> None:
        """Give the recorded baseline an identity."""


class Rebuilt(NamedTuple):
    """A recorded identity rebuilt in a repository, and the commit that showed it."""

    identity: RepoIdentity
    commit: NamedCommit
    worktree: str


def unidentified(baseline: GitBaseline | None) -> bool:
    """True for a recorded baseline in git that names no root commit (an agent's log)."""
    return baseline is not None and not (baseline.identity and baseline.identity.root_commits)


def rebuild(path: str, commits: Sequence[NamedCommit], *,
            remote_url: str | None = None) -> Rebuilt | None:
    """The identity of the recorded repository as the repository at `path` shows it: the root
    commits of the first named commit that is a commit there (None: none is, or no repository)."""
    found = _toplevel(path) if commits else None
    return _rebuild_in(*found, commits, remote_url=remote_url)[0] if found is not None else None


def _rebuild_in(top: str, common: str, commits: Sequence[NamedCommit], *,
                remote_url: str | None) -> tuple[Rebuilt | None, bool]:
    """(the identity rebuilt, or None; whether any named commit is a commit there — in a
    shallow clone one may be, its root commits unknown)."""
    seen = False
    for named in commits:
        if not _HEX.fullmatch(named.commit):
            continue
        shown = gitrun.run(top, "show", "-s", "--format=%H%x00%s", f"{named.commit}^{{commit}}")
        sha, _, subject = shown.text().partition("\0") if shown.ok else ("", "", "")
        if not sha.startswith(named.commit) or (named.subject is not None
                                                and subject != named.subject):
            continue
        seen = True
        roots = root_commits(top, common, gitrun.started(top, "rev-list", "--max-parents=0", sha))
        if roots:
            return Rebuilt(RepoIdentity(root_commits=roots, remote_url=remote_url), named, top), True
    return None, seen


def reidentify(replayed: Replayed, worktree: RecordedWorktree,
               root: str) -> tuple[GitBaseline | None, str | None]:
    """The thread's recorded baseline (`worktree`: its state), with its identity rebuilt in the
    repository at `root` when it names no root commit (the worktree state and the thread's
    `identity` fact then say so), and a note when the log names commits none of which is there."""
    recorded = worktree.recorded()
    commits = worktree.named_commits()
    found = _toplevel(root) if commits and unidentified(recorded) else None
    if recorded is None or found is None:
        return recorded, None
    remote = recorded.identity.remote_url if recorded.identity else None
    rebuilt, seen = _rebuild_in(*found, commits, remote_url=remote)
    if rebuilt is None and seen:
        return recorded, None  # there, but its history is cut (a shallow clone): roots unknown
    if rebuilt is None:
        names = ", ".join(c.commit[:12] for c in commits)
        return recorded, (f"none of the commits the log names ({names}) is in the repository at "
                          f"{found[0]}: the recorded repository's identity could not be rebuilt")
    worktree.set_identity(rebuilt.identity)
    subject = f" ({rebuilt.commit.subject!r})" if rebuilt.commit.subject else ""
    data = dict(replayed.meta.get("data") or {})
    facts = dict(data.get("facts") or {})
    facts["identity"] = {"source": f"{REBUILT_SOURCE}: {rebuilt.commit.commit}{subject} in "
                                   f"{rebuilt.worktree}",
                         "as_of": utc_now_iso(), "origin": "workspace",
                         "exact": len(rebuilt.commit.commit) == 40}
    replayed.meta = {**replayed.meta, "data": {**data, "facts": facts}}
    return worktree.recorded(), None


def _toplevel(path: str) -> tuple[str, str] | None:
    """`baseline.toplevel`, None also when git refuses the directory or it is missing."""
    try:
        return toplevel(path)
    except GitRefused:
        return None


def find_moved(identity: RepoIdentity | None, *, near: str,
               commits: Sequence[NamedCommit] = ()) -> str | None:
    """The repository with `identity` (or, when it names no root commit, holding one of
    `commits`), found again among the directories next to `near`."""
    parent = os.path.dirname(os.path.realpath(near))
    while parent and not os.path.isdir(parent):
        parent = os.path.dirname(parent)
    try:
        names = sorted(os.listdir(parent))[:_MAX_CANDIDATES]
    except OSError:
        return None
    candidates = [os.path.join(parent, n) for n in names
                  if os.path.isdir(os.path.join(parent, n, ".git"))]
    if identity is not None and (identity.root_commits or identity.remote_url):
        found = find_by_identity(identity, candidates)
        if found is not None or identity.root_commits:
            return found
    for candidate in candidates if commits else ():
        rebuilt = rebuild(candidate, commits)
        here = identity_of(candidate) if rebuilt is not None else None
        if rebuilt is not None and here is not None and same_repository(rebuilt.identity, here[1]):
            return here[0]
    return None


def find_by_identity(identity: RepoIdentity, candidates: Iterable[str]) -> str | None:
    """Return the worktree of the first candidate holding the same repository, else None."""
    for candidate in candidates:
        found = identity_of(candidate)
        if found and same_repository(identity, found[1]):
            return found[0]
    return None
