"""The fast resume check: a small digest of a journal, enough to prove a resume is `ok`.

A hook starts a process for every resume, and a full check imports the whole recovery stack. So
each hook that writes a journal also leaves `<store>/hooks/digests/<agent>-<session>.json`: the
journal's latest baseline, the last hash of every file it knows, its tool calls in doubt, its
todos, and the size, mtime and inode of the journal file it was taken from. A resume then
needs one `git rev-parse` and the touched files' hashes: when all of them match, the verdict is
`ok` (what the full check would say); when anything differs, or the digest is not exactly as
fresh as the journal, the full check runs and says what differs. So the digest can only make a
resume faster, never change its verdict. Stdlib only.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..recovery.replay import Replayed

_GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
_CHUNK = 1 << 20


@dataclass(frozen=True, kw_only=True)
class Digest:
    """What the fast check compares, taken from one state of a journal."""

    journal: str  # the journal's rollout file
    size: int
    mtime_ns: int
    inode: int
    cwd: str  # the journal's workspace (real path)
    baseline: dict[str, Any]  # repo_root, worktree, branch, head
    files: dict[str, str | None] = field(default_factory=dict)  # path -> last sha256 (None: absent)
    in_doubt: list[dict[str, Any]] = field(default_factory=list)  # operation_id, tool, seq
    todos: dict[str, Any] | None = None  # done, total, items
    headline: str = ""


def _path(store_root: Path, agent: str, session_id: str) -> Path:
    return store_root / "hooks" / "digests" / f"{agent}-{session_id}.json"


def take(replayed: Replayed) -> Digest | None:
    """The digest of a replayed journal; None when the fast check must not vouch for it
    (damage, no git baseline, a rewind or a verifier result whose staleness needs the full check)."""
    from ..recovery.subsystems.file_history import FileHistory
    from ..recovery.subsystems.worktree import Worktree

    if replayed.damaged or replayed.unreadable or not replayed.rollouts:
        return None
    latest = replayed.latest
    state = replayed.state
    summaries = state.summaries()
    if summaries.get("rewinds", {}).get("count") or any((summaries.get("verifier") or {}).values()):
        return None
    try:
        baseline = state.get(Worktree).recorded()
    except ValueError:
        return None
    if baseline is None or baseline.head is None or latest.path is None or latest.tail is not None:
        return None
    history = state.get(FileHistory)
    files: dict[str, str | None] = {}
    for path, versions in history.files.items():
        if versions[-1].get("unknown"):
            return None
        files[path] = versions[-1].get("hash")
    info = os.stat(latest.path)  # the size is what was read: one grown since proves nothing
    worktree = state.get(Worktree)
    return Digest(journal=str(latest.path), size=latest.size, mtime_ns=info.st_mtime_ns,
                  inode=info.st_ino, cwd=os.path.realpath(str(worktree.state.get("cwd") or "")),
                  baseline={"repo_root": baseline.repo_root, "worktree": baseline.worktree,
                            "branch": baseline.branch, "head": baseline.head},
                  files=files, in_doubt=summaries["operations"]["in_doubt_operations"],
                  todos=summaries.get("todos"), headline=worktree.headline())


def save(store_root: Path, agent: str, session_id: str, digest: Digest | None) -> None:
    """Keep the digest of a journal (or remove a stale one when there is none to keep)."""
    from .state import write_json

    path = _path(store_root, agent, session_id)
    if digest is None:
        path.unlink(missing_ok=True)
        return
    write_json(store_root, path, asdict(digest))


_TYPES: dict[str, type | tuple[type, ...]] = {
    "journal": str, "size": int, "mtime_ns": int, "inode": int, "cwd": str, "baseline": dict,
    "files": dict, "in_doubt": list, "todos": (dict, type(None)), "headline": str}


def _well_typed(data: dict[str, Any]) -> bool:
    """True when every field of a loaded digest has the JSON type `take` writes."""
    return (all(isinstance(data.get(k), t) for k, t in _TYPES.items() if k in data)
            and all(isinstance(v, (str, type(None))) for v in data.get("baseline", {}).values())
            and all(isinstance(v, (str, type(None))) for v in data.get("files", {}).values())
            and all(isinstance(v, dict) for v in data.get("in_doubt", []))
            and _todos_typed(data.get("todos")))


def _todos_typed(todos: dict[str, Any] | None) -> bool:
    if todos is None:
        return True
    items = todos.get("items")
    return (isinstance(todos.get("done"), int) and isinstance(todos.get("total"), int)
            and isinstance(items, list) and all(isinstance(i, dict) for i in items))


def load(store_root: Path, agent: str, session_id: str) -> Digest | None:
    """The digest of a journal, or None when there is none, it cannot be read, or a field has
    another type than `take` writes (a damaged or crafted file never reaches the fast check)."""
    try:
        data = json.loads(_path(store_root, agent, session_id).read_bytes())
        return Digest(**data) if isinstance(data, dict) and _well_typed(data) else None
    except (OSError, ValueError, TypeError):
        return None


def _fresh(digest: Digest) -> bool:
    try:
        info = os.stat(digest.journal)
    except OSError:
        return False
    return (info.st_size, info.st_mtime_ns, info.st_ino) == (digest.size, digest.mtime_ns, digest.inode)


def _git_now(cwd: str) -> dict[str, Any] | None:
    """worktree, repo_root, head, branch of `cwd` from one `git rev-parse` (None: not simple)."""
    from ..recovery.gitrun import environment  # imported by the policy already: costs nothing

    try:
        done = subprocess.run(["git", "rev-parse", "--show-toplevel", "--git-common-dir", "HEAD",
                               "--symbolic-full-name", "HEAD"], cwd=cwd, capture_output=True,
                              env=environment(_GIT_ENV), check=False, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.decode("utf-8", "surrogateescape").splitlines()
    if done.returncode != 0 or len(lines) != 4:
        return None
    top, common, head, ref = lines
    top = os.path.realpath(top)
    common = os.path.realpath(os.path.join(top, common))
    root = os.path.dirname(common) if os.path.basename(common) == ".git" else top
    branch = ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else None
    return {"worktree": top, "repo_root": root, "head": head, "branch": branch}


def _file_hash(root: str, rel: str) -> str | None | bool:
    """sha256 of `root/rel`; None when absent; False when it resolves outside `root`."""
    target = os.path.realpath(os.path.join(root, rel))
    if os.path.commonpath([root, target]) != root:
        return False
    digest = hashlib.sha256()
    try:
        with open(target, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError:
        return False
    return digest.hexdigest()


def proves_ok(digest: Digest | None, cwd: str) -> bool:
    """True only when a resume of the journal in `cwd` is certainly `ok`."""
    if digest is None or not _fresh(digest) or not os.path.isdir(cwd):
        return False
    if os.path.realpath(cwd) != digest.cwd:
        return False
    now = _git_now(cwd)
    recorded = digest.baseline
    if now is None or any(now[k] != recorded.get(k) for k in ("head", "branch")):
        return False
    if any(os.path.realpath(str(recorded.get(k) or "")) != now[k] for k in ("worktree", "repo_root")):
        return False
    return all(_file_hash(digest.cwd, path) == digest_hash
               for path, digest_hash in digest.files.items())
