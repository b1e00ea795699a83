"""Capture the git workspace a session runs in (its comparison: `comparison`); drift is data.

Invariants: only read-only git commands run here (rev-parse, rev-list, symbolic-ref, config --get,
status), through `gitrun` (optional locks off, no prompts); a repository git refuses to read
raises GitRefused with git's reason and is never taken for "outside git"; a repository is
identified by its root commits (then its origin URL), not its path.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import GitRefused
from ..events import GitBaseline, RepoIdentity
from . import gitrun, queries
from .comparison import same_place, same_repository
from .paths import RealPaths

if TYPE_CHECKING:  # a capture (the listing's need) imports neither
    from .findings import Workspace

_CHUNK = 1 << 20
_USERINFO = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@")


class PathEscapesRoot(ValueError):
    """A file path that resolves outside the workspace root; it is never read."""


def toplevel(path: str) -> tuple[str, str] | None:
    """The working tree containing `path` and its repository's common git directory; None
    outside git; GitRefused when git will not read it."""
    if not os.path.isdir(path):
        return None
    done = gitrun.run(path, "rev-parse", "--show-toplevel", "--git-common-dir")
    lines = done.text().split("\n") if done.ok else []
    if len(lines) == 2 and all(lines):
        return os.path.realpath(lines[0]), os.path.realpath(os.path.join(path, lines[1]))
    refused = gitrun.refusal(done, path)
    if refused is not None:
        raise refused
    return None


def root_commits(top: str, common_dir: str,
                  started: Callable[[], gitrun.GitResult] | None = None) -> list[str]:
    """The commits without parents in HEAD's history, sorted (`started`: that git call, already
    running). In a shallow clone the commits its history is cut at (`<common dir>/shallow`) have
    parents, only not here: they are no root commits, and the true ones may be unknown (then the
    identity rests on the origin URL)."""
    done = started() if started is not None else gitrun.run(top, *queries.ROOTS)
    roots = (_value(done) or "").split()
    try:
        with open(os.path.join(common_dir, "shallow"), "rb") as handle:
            cut = set(handle.read().decode("ascii", "replace").split())
    except OSError:  # not shallow (the common case: no such file)
        return sorted(roots)
    return sorted(r for r in roots if r not in cut)


def _value(done: gitrun.GitResult) -> str | None:
    """The stripped output of a git query, or None when git answers no (as `gitrun.value`)."""
    return done.text().strip() or None if done.ok else None


def redact_url(url: str | None) -> str | None:
    """Drop user:password from a URL so credentials never reach the log."""
    if not url:
        return None
    return _USERINFO.sub(r"\1", url.strip())


def identity_of(path: str) -> tuple[str, RepoIdentity] | None:
    """Return (worktree, identity) of the repository containing `path`, or None outside git."""
    found = toplevel(path)
    if found is None:
        return None
    top, common = found
    remote = gitrun.value(top, "config", "--get", "remote.origin.url")
    return top, RepoIdentity(root_commits=root_commits(top, common), remote_url=redact_url(remote))


def _repo_root(top: str) -> str:
    """Return the main working tree of the repository (differs from `top` in a linked worktree)."""
    common = gitrun.value(top, "rev-parse", "--git-common-dir")
    if common:
        common = os.path.realpath(os.path.join(top, common))
        if os.path.basename(common) == ".git":
            return os.path.dirname(common)
    return top


def _status_paths(porcelain: str) -> list[str]:
    """Return the paths named by `git status --porcelain=v2 -z` output (rename sources skipped)."""
    paths: list[str] = []
    fields = iter(porcelain.split("\0"))
    for entry in fields:
        kind = entry[:1]
        if kind == "1":
            paths.append(entry.split(" ", 8)[8])
        elif kind == "2":
            paths.append(entry.split(" ", 9)[9])
            next(fields, None)
        elif kind == "u":
            paths.append(entry.split(" ", 10)[10])
        elif kind == "?":
            paths.append(entry[2:])
    return paths


def dirty_fingerprint(worktree: str) -> str | None:
    """Return sha256 of `git status --porcelain=v2` and each listed file's bytes; None if clean."""
    done = gitrun.run(worktree, "status", "--porcelain=v2", "-z")
    porcelain = done.stdout.decode("utf-8", "surrogateescape") if done.ok else ""
    if not porcelain:
        return None
    import hashlib  # here, not at start-up: OpenSSL's start costs ~3 ms

    digest = hashlib.sha256(porcelain.encode("utf-8", "surrogateescape"))
    paths = RealPaths(worktree)
    for rel in _status_paths(porcelain):
        try:
            content = file_hash(worktree, rel, paths=paths) or "-"
        except PathEscapesRoot:  # a symlink leading out of the tree: its target is in the status
            content = "outside"
        digest.update(b"\0" + content.encode())
    return digest.hexdigest()


class Head(NamedTuple):
    """What one `git rev-parse` says of a workspace (and the files that change when HEAD moves)."""

    worktree: str
    repo_root: str
    branch: str | None
    head: str
    git_dir: str
    common_dir: str

    def files(self) -> tuple[str, ...]:
        """HEAD, the branch's ref and packed-refs: a moved HEAD or branch changes one of them."""
        ref = (os.path.join(self.common_dir, "refs", "heads", *self.branch.split("/")),
               ) if self.branch else ()
        return (os.path.join(self.git_dir, "HEAD"), *ref,
                os.path.join(self.common_dir, "packed-refs"))


def head_of(path: str) -> Head | None:
    """Worktree, repository root, branch and HEAD in ONE git call; None when HEAD is unborn or
    the call fails (the caller then asks step by step, which tells why)."""
    if not os.path.isdir(path):
        return None
    done = gitrun.run(path, *queries.HEAD)
    return head_from(path, done.text()) if done.ok else None


def head_from(path: str, answer: str) -> Head | None:
    """The Head that `git rev-parse` (`queries.HEAD`) answered in `path`; None when incomplete."""
    lines = answer.split("\n")
    if len(lines) != 5 or not all(lines):
        return None
    top = os.path.realpath(lines[0])
    common = os.path.realpath(os.path.join(path, lines[1]))
    root = os.path.dirname(common) if os.path.basename(common) == ".git" else top
    return Head(top, root, gitrun.branch_of(lines[4]), lines[3], lines[2], common)


def capture(path: str | os.PathLike[str], *, dirty: bool = False,
            known: GitBaseline | None = None, remote: bool = True) -> GitBaseline | None:
    """Capture the git baseline of the repository holding `path`; None outside git or if missing.

    One git call for worktree, repository root, branch and HEAD; the identity (root commits,
    origin) costs two more, none when `known` — a baseline recorded earlier — has the same HEAD
    commit, whose history (so its root commits) is the same; without `known` they run beside the
    first. `remote=False` asks no origin URL (one call less: a listing's estimate compares root
    commits only; the identity's remote_url is then None, unless there are no root commits to
    compare: a shallow clone). `dirty=True` adds the dirty fingerprint (a status plus hashing
    every changed file), which no comparison reads.
    """
    where = os.fspath(path)
    early = identity_started(where, remote=remote) if known is None else None
    head = head_of(where)
    if head is None:
        if early is not None:
            early.wait()
        return _capture_slowly(where, dirty=dirty)
    return from_head(head, dirty=dirty, known=known, remote=remote, early=early)


class IdentityCalls:
    """The identity's git calls started early, beside `head_of`'s (each waited for when used).
    A plain class: a NamedTuple costs ~0.3 ms to create at import, on a listing's path."""

    __slots__ = ("roots", "remote")

    def __init__(self, roots: Callable[[], gitrun.GitResult],
                 remote: Callable[[], gitrun.GitResult] | None) -> None:
        self.roots = roots
        self.remote = remote

    def wait(self) -> None:
        """Wait for the calls (their answers unused)."""
        self.roots()
        if self.remote is not None:
            self.remote()


def identity_started(path: str, *, remote: bool) -> IdentityCalls | None:
    """Start the identity's git calls in `path` now (root commits; the origin URL too if `remote`),
    to run beside `head_of`'s when no known baseline could spare them; None when `path` is no
    directory. They answer as in the repository's top: git finds it from `path` alike."""
    if not os.path.isdir(path):
        return None
    return IdentityCalls(gitrun.started(path, *queries.ROOTS),
                         gitrun.started(path, *queries.REMOTE) if remote else None)


def from_head(head: Head, *, dirty: bool = False, known: GitBaseline | None = None,
              remote: bool = True, early: IdentityCalls | None = None) -> GitBaseline:
    """The baseline of a workspace whose head is known (see `capture`; `early`: its identity's
    calls, already started by `identity_started`)."""
    top = head.worktree
    if known is not None and known.head == head.head and known.identity is not None \
            and known.identity.root_commits:
        if early is not None:
            early.wait()
        identity = known.identity
    else:
        roots = root_commits(top, head.common_dir, early.roots if early is not None else None)
        # without root commits (a shallow clone) the repository is known by its origin only
        if early is not None and early.remote is not None:
            url = _value(early.remote())
        else:
            url = gitrun.value(top, *queries.REMOTE) if remote or not roots else None
        identity = RepoIdentity(root_commits=roots, remote_url=redact_url(url))
    return GitBaseline(repo_root=head.repo_root, worktree=top, identity=identity,
                       branch=head.branch, head=head.head,
                       dirty=dirty_fingerprint(top) if dirty else None)


def _capture_slowly(path: str, *, dirty: bool) -> GitBaseline | None:
    """Capture step by step: outside git, a refused repository, an unborn HEAD."""
    found = identity_of(path)
    if found is None:
        return None
    top, identity = found
    return GitBaseline(
        repo_root=_repo_root(top),
        worktree=top,
        identity=identity,
        branch=gitrun.branch(top),
        head=gitrun.value(top, "rev-parse", "--verify", "-q", "HEAD^{commit}"),
        dirty=dirty_fingerprint(top) if dirty else None,
    )


def file_hash(root: str | os.PathLike[str], relpath: str, *,
              paths: RealPaths | None = None) -> str | None:
    """Return the sha256 hex of `root/relpath`, None if it is not a regular file (missing, a
    directory, a named pipe, a socket, a device); refuse escaping paths.

    `paths` (a RealPaths of `root`) resolves many files of one pass with fewer system calls.
    Opened without blocking (reading a named pipe would wait forever for a writer).
    """
    paths = paths or RealPaths(root)
    target = paths.real(relpath)
    if not paths.within(target):
        raise PathEscapesRoot(f"{relpath!r} resolves outside {paths.root}")
    import hashlib  # here, not at start-up: OpenSSL's start costs ~3 ms

    digest = hashlib.sha256()
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


def current_workspace(root: str, *, requested: Mapping[str, Any] | None = None,
                      recorded: GitBaseline | None = None,
                      recorded_cwd: str | None = None) -> Workspace:
    """Build the Workspace subsystems validate against: existence, baseline now, file hashing.

    `recorded`: the thread's baseline (its identity is reused when HEAD is the same commit).
    `recorded_cwd`: the directory the thread's file paths are relative to; when `root` is another
    directory of the same repository, the files are hashed at that directory's place in it.
    When git refuses the workspace, the baseline is None and `git_note` says git's reason.
    """
    from .findings import Workspace

    root = os.path.abspath(root)
    exists = os.path.isdir(root)
    baseline, note = None, None
    if exists:
        try:
            baseline = capture(root, known=recorded)
        except GitRefused as exc:
            note = str(exc)
    files = _files_root(root, baseline, recorded, recorded_cwd)
    return Workspace(
        root=root,
        exists=exists,
        baseline=baseline,
        file_hash=lambda rel: file_hash(files, rel) if exists else None,
        requested=dict(requested or {}),
        git_note=note,
    )


def _files_root(root: str, current: GitBaseline | None, recorded: GitBaseline | None,
                recorded_cwd: str | None) -> str:
    """Where the thread's cwd-relative file paths lie now: `root`, unless it is another
    directory of the same repository than the recorded cwd (then that cwd's place in it)."""
    if current is None or recorded is None or not isinstance(recorded_cwd, str) \
            or not current.worktree or not recorded.worktree:
        return root
    same = same_repository(recorded.identity, current.identity)
    if not (same or same is None and same_place(recorded.repo_root, current.repo_root)):
        return root
    offset = os.path.relpath(recorded_cwd, recorded.worktree)
    if offset.startswith(".."):
        return root
    return os.path.normpath(os.path.join(current.worktree, offset))
