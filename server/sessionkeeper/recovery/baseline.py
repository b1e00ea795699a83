"""Capture and compare the git workspace a session runs in; drift is data, never a side effect.

Invariants: only read-only git commands run here (rev-parse, rev-list, symbolic-ref, config --get,
status), through `gitrun` (optional locks off, no prompts); a repository git refuses to read
raises GitRefused with git's reason and is never taken for "outside git"; a repository is
identified by its root commits (then its origin URL), not its path.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import GitRefused
from ..events import GitBaseline, RepoIdentity
from . import gitrun
from .paths import RealPaths

if TYPE_CHECKING:  # a capture (the listing's need) imports neither
    from .findings import Difference, Workspace
    from .report import Verdict

BLOCKING_KINDS = frozenset({"cwd_missing", "other_repository", "baseline_unreadable",
                            "git_refused"})
"""Difference kinds after which the session cannot continue here (verdict `blocked`)."""

_CHUNK = 1 << 20
_USERINFO = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@")


class PathEscapesRoot(ValueError):
    """A file path that resolves outside the workspace root; it is never read."""


def _toplevel(path: str) -> tuple[str, str] | None:
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


def _root_commits(top: str, common_dir: str) -> list[str]:
    """The commits without parents in HEAD's history, sorted. In a shallow clone the commits its
    history is cut at (`<common dir>/shallow`) have parents, only not here: they are no root
    commits, and the true ones may be unknown (then the identity rests on the origin URL)."""
    roots = (gitrun.value(top, "rev-list", "--max-parents=0", "HEAD") or "").split()
    try:
        with open(os.path.join(common_dir, "shallow"), "rb") as handle:
            cut = set(handle.read().decode("ascii", "replace").split())
    except OSError:  # not shallow (the common case: no such file)
        return sorted(roots)
    return sorted(r for r in roots if r not in cut)


def redact_url(url: str | None) -> str | None:
    """Drop user:password from a URL so credentials never reach the log."""
    if not url:
        return None
    return _USERINFO.sub(r"\1", url.strip())


def identity_of(path: str) -> tuple[str, RepoIdentity] | None:
    """Return (worktree, identity) of the repository containing `path`, or None outside git."""
    found = _toplevel(path)
    if found is None:
        return None
    top, common = found
    remote = gitrun.value(top, "config", "--get", "remote.origin.url")
    return top, RepoIdentity(root_commits=_root_commits(top, common), remote_url=redact_url(remote))


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
    done = gitrun.run(path, "rev-parse", "--show-toplevel", "--git-common-dir",
                      "--absolute-git-dir", "HEAD^{commit}", "--symbolic-full-name", "HEAD")
    lines = done.text().split("\n") if done.ok else []
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
    origin) costs two more, unless `known` — a baseline recorded earlier — has the same HEAD
    commit, whose history (so its root commits) is the same. `remote=False` asks no origin URL
    (one call less: a listing's estimate compares root commits only; the identity's remote_url is
    then None, unless there are no root commits to compare: a shallow clone). `dirty=True` adds
    the dirty fingerprint (a status plus hashing every changed file), which no comparison reads.
    """
    where = os.fspath(path)
    head = head_of(where)
    if head is None:
        return _capture_slowly(where, dirty=dirty)
    return from_head(head, dirty=dirty, known=known, remote=remote)


def from_head(head: Head, *, dirty: bool = False, known: GitBaseline | None = None,
              remote: bool = True) -> GitBaseline:
    """The baseline of a workspace whose head is known (see `capture`)."""
    top = head.worktree
    if known is not None and known.head == head.head and known.identity is not None \
            and known.identity.root_commits:
        identity = known.identity
    else:
        roots = _root_commits(top, head.common_dir)
        # without root commits (a shallow clone) the repository is known by its origin only
        url = gitrun.value(top, "config", "--get", "remote.origin.url") \
            if remote or not roots else None
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


def _same_place(a: str | None, b: str | None) -> bool:
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
    if same is None:  # no commits and no remote on one side: fall back to the path
        same = _same_place(recorded.repo_root, current.repo_root)
    if not same:
        return [Difference("other_repository", _ident(recorded), _ident(current),
                           "no common root commit")]
    diffs: list[Difference] = []
    if not _same_place(recorded.repo_root, current.repo_root):
        diffs.append(Difference("relocated", recorded.repo_root, current.repo_root,
                                "same repository at another path"))
    elif not _same_place(recorded.worktree, current.worktree):
        diffs.append(Difference("relocated", recorded.worktree, current.worktree,
                                "another worktree of the same repository"))
    if recorded.branch != current.branch:
        diffs.append(Difference("branch", recorded.branch, current.branch,
                                "detached HEAD" if current.branch is None else ""))
    if recorded.head != current.head:
        diffs.append(Difference("head", recorded.head, current.head))
    return diffs


def _ident(baseline: GitBaseline | None) -> dict[str, Any] | None:
    """Return the part of a baseline that names the repository (for a difference report)."""
    if baseline is None:
        return None
    ident = dataclasses.asdict(baseline.identity) if baseline.identity else None
    return {"repo_root": baseline.repo_root, "identity": ident}


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


_MAX_CANDIDATES = 50


def find_moved(identity: RepoIdentity, *, near: str) -> str | None:
    """The repository with `identity`, found again among the directories next to `near`."""
    parent = os.path.dirname(os.path.realpath(near))
    while parent and not os.path.isdir(parent):
        parent = os.path.dirname(parent)
    try:
        names = sorted(os.listdir(parent))[:_MAX_CANDIDATES]
    except OSError:
        return None
    candidates = [os.path.join(parent, n) for n in names
                  if os.path.isdir(os.path.join(parent, n, ".git"))]
    return find_by_identity(identity, candidates)


def find_by_identity(identity: RepoIdentity, candidates: Iterable[str]) -> str | None:
    """Return the worktree of the first candidate holding the same repository, else None."""
    for candidate in candidates:
        found = identity_of(candidate)
        if found and same_repository(identity, found[1]):
            return found[0]
    return None


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
    if not (same or same is None and _same_place(recorded.repo_root, current.repo_root)):
        return root
    offset = os.path.relpath(recorded_cwd, recorded.worktree)
    if offset.startswith(".."):
        return root
    return os.path.normpath(os.path.join(current.worktree, offset))


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
