"""The fast resume check: a small digest of a journal, enough to prove a resume is `ok`.

A hook starts a process for every resume, and a full check imports the whole recovery stack. So
each hook that writes a journal also leaves `<store>/hooks/digests/<agent>-<session>.json`: the
journal's latest baseline, the last hash of every file it knows, its tool calls in doubt, its
todos, and the size, mtime and inode of the journal file it was taken from. A resume then
needs one `git rev-parse` and the touched files' hashes: when all of them match, the verdict is
`ok` (what the full check would say); when anything differs, or the digest is not exactly as
fresh as the journal, the full check runs and says what differs. So the digest can only make a
resume faster, never change its verdict. Standard library only: a resume its digest proves ok is
answered by a hook's thin process (`proven`).
"""

from __future__ import annotations

import os

from .. import jsontext
from .spawn import git

try:  # CPython's own SHA-256: hashlib's import starts OpenSSL, which costs a hook ~2 ms
    from _sha256 import sha256  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.12+ names it _sha2; hashlib is the same hash
    from hashlib import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..recovery.replay import Replayed

_CHUNK = 1 << 20


class Digest:
    """What the fast check compares, taken from one state of a journal."""

    __slots__ = ("journal", "size", "mtime_ns", "inode", "cwd", "baseline", "files", "in_doubt",
                 "todos", "headline")

    def __init__(self, *, journal: str, size: int, mtime_ns: int, inode: int, cwd: str,
                 baseline: dict[str, Any], files: dict[str, str | None] | None = None,
                 in_doubt: list[dict[str, Any]] | None = None,
                 todos: dict[str, Any] | None = None, headline: str = "") -> None:
        """`journal`: its rollout file (taken at `size`, `mtime_ns`, `inode`); `cwd`: its
        workspace (a real path); `baseline`: repo_root, worktree, branch, head; `files`: path ->
        last sha256 (None: absent); `in_doubt`: operation_id, tool, seq; `todos`: done, total,
        items."""
        self.journal = journal
        self.size = size
        self.mtime_ns = mtime_ns
        self.inode = inode
        self.cwd = cwd
        self.baseline = baseline
        self.files = {} if files is None else files
        self.in_doubt = [] if in_doubt is None else in_doubt
        self.todos = todos
        self.headline = headline

    def as_dict(self) -> dict[str, Any]:
        """The digest as its file holds it."""
        return {name: getattr(self, name) for name in self.__slots__}


def _path(store_root: str | os.PathLike[str], agent: str, session_id: str) -> str:
    return os.path.join(os.fspath(store_root), "hooks", "digests", f"{agent}-{session_id}.json")


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


def save(store_root: str | os.PathLike[str], agent: str, session_id: str,
         digest: Digest | None) -> None:
    """Keep the digest of a journal (or remove a stale one when there is none to keep)."""
    from .state import write_json

    path = _path(store_root, agent, session_id)
    if digest is None:
        try:  # noqa: SIM105 - contextlib is not loaded in a hook's thin process
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    write_json(store_root, path, digest.as_dict())


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


def load(store_root: str | os.PathLike[str], agent: str, session_id: str) -> Digest | None:
    """The digest of a journal, or None when there is none, it cannot be read, or a field has
    another type than `take` writes (a damaged or crafted file never reaches the fast check)."""
    try:
        with open(_path(store_root, agent, session_id), "rb") as handle:
            data = jsontext.loads(handle.read())
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
    status, out = git(cwd, "rev-parse", "--show-toplevel", "--git-common-dir", "HEAD",
                      "--symbolic-full-name", "HEAD").result()
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if status != 0 or len(lines) != 4:
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
    digest = sha256()
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
