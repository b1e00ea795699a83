"""Reading a file's content for file history: stored as a blob, or hash only with the reason why.

Invariants:
- a path is read only when it resolves (symlinks included) inside the workspace, and only a
  regular file is opened (never a FIFO or a device; a last-moment symlink is not followed);
- a secrets file (`.env`-style names, private keys) is hashed but never stored unless allowed;
- binary content (a NUL in the first 8000 bytes, git's test) and content over the size limit
  are hashed, not stored; a file over the limit is hashed while streaming, never held whole;
- content is never redacted: a stored blob is the file byte for byte;
- git is only read (`ls-tree`, `cat-file`), never written, with optional locks off.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from ..errors import InvalidWorkspace
from ..store.blobs import BlobStore
from . import gitrun
from .content_rules import DEFAULT_LIMIT_BYTES, escapes, is_binary, is_secret_file
from .subsystems.file_history import norm_path

__all__ = ["DEFAULT_LIMIT_BYTES", "Captured", "HashOnly", "Missing", "Stored", "capture",
           "capture_at_commit", "capture_content", "is_binary", "is_secret_file"]

_CHUNK = 1 << 20
_GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_LFS_SKIP_SMUDGE": "1"}

Reason = Literal["binary", "too_large", "outside_workspace", "secret_file", "not_a_file"]


@dataclass(frozen=True)
class Stored:
    """The content is in the blob store under `hash`."""

    path: str
    hash: str
    size: int


@dataclass(frozen=True)
class HashOnly:
    """Only the hash is kept (None when the file was not read at all), and why."""

    path: str
    reason: Reason
    hash: str | None = None
    size: int | None = None


@dataclass(frozen=True)
class Missing:
    """No file at that path."""

    path: str


Captured = Stored | HashOnly | Missing


def capture(workspace: str | os.PathLike[str], relpath: str, *, blobs: BlobStore,
            base: str | None = None, limit_bytes: int = DEFAULT_LIMIT_BYTES,
            allow_secret_files: bool = False) -> Captured:
    """Read `workspace/relpath` now; store its content (a delta against `base` when that pays)."""
    rel = norm_path(relpath)
    root = os.path.realpath(workspace)
    target = os.path.realpath(os.path.join(root, rel))
    if escapes(rel) or os.path.commonpath([root, target]) != root or target == root:
        return HashOnly(rel, "outside_workspace")
    secret = not allow_secret_files and (is_secret_file(rel) or is_secret_file(target))
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return Missing(rel)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # became a symlink after it was resolved
            return HashOnly(rel, "not_a_file")
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return HashOnly(rel, "not_a_file")
        return _classify(rel, iter(lambda: os.read(fd, _CHUNK), b""), blobs=blobs, base=base,
                         limit_bytes=limit_bytes, secret=secret)
    finally:
        os.close(fd)


def capture_content(relpath: str, data: bytes, *, blobs: BlobStore, base: str | None = None,
                    limit_bytes: int = DEFAULT_LIMIT_BYTES,
                    allow_secret_files: bool = False) -> Stored | HashOnly:
    """Classify and store content the caller already holds (e.g. an API passing it explicitly)."""
    rel = norm_path(relpath)
    if escapes(rel):
        return HashOnly(rel, "outside_workspace")
    secret = not allow_secret_files and is_secret_file(rel)
    return _classify(rel, [data], blobs=blobs, base=base, limit_bytes=limit_bytes, secret=secret)


def capture_at_commit(workspace: str | os.PathLike[str], relpath: str, *, commit: str,
                      blobs: BlobStore, limit_bytes: int = DEFAULT_LIMIT_BYTES,
                      allow_secret_files: bool = False) -> Captured:
    """Read the file's content at `commit` with git (as checkout would write it); Missing if untracked.

    This is the version before the session's first change of a tracked file (the baseline commit).
    """
    rel = norm_path(relpath)
    if escapes(rel):
        return HashOnly(rel, "outside_workspace")
    listing = _git(workspace, "ls-tree", "-z", commit, "--", rel)
    entry = listing.split(b"\0", 1)[0]
    if not entry:
        return Missing(rel)
    meta, _, name = entry.partition(b"\t")
    mode, kind, _oid = meta.split(b" ")
    if kind != b"blob" or mode == b"120000" or name.decode("utf-8", "surrogateescape") != rel:
        return HashOnly(rel, "not_a_file")
    secret = not allow_secret_files and is_secret_file(rel)
    env = gitrun.environment(_GIT_ENV)
    with subprocess.Popen(["git", "cat-file", "--filters", f"{commit}:./{rel}"], cwd=workspace,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        out, err = proc.stdout, proc.stderr
        assert out is not None and err is not None
        found = _classify(rel, iter(lambda: out.read(_CHUNK), b""), blobs=blobs, base=None,
                          limit_bytes=limit_bytes, secret=secret)
        error = err.read()
    if proc.returncode != 0:
        raise InvalidWorkspace(f"cannot read {rel} at {commit}: {error.decode(errors='replace').strip()}")
    return found


def _git(workspace: str | os.PathLike[str], *args: str) -> bytes:
    """Run one read-only git command in the workspace; InvalidWorkspace when git fails."""
    env = gitrun.environment(_GIT_ENV)
    try:
        done = subprocess.run(["git", *args], cwd=workspace, env=env, capture_output=True, check=False)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise InvalidWorkspace(f"cannot run git in {workspace}: {exc}") from None
    if done.returncode != 0:
        raise InvalidWorkspace(f"git {args[0]} failed in {workspace}: "
                               f"{done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _classify(rel: str, chunks: Iterable[bytes], *, blobs: BlobStore, base: str | None,
              limit_bytes: int, secret: bool) -> Stored | HashOnly:
    """Hash the whole stream; store it unless it is secret, over the limit or binary."""
    digest = hashlib.sha256()
    kept: list[bytes] = []
    size = 0
    for chunk in _chunks(chunks):
        digest.update(chunk)
        size += len(chunk)
        if size <= limit_bytes and not secret:
            kept.append(chunk)
        else:
            kept.clear()
    key = digest.hexdigest()
    if secret:
        return HashOnly(rel, "secret_file", key, size)
    if size > limit_bytes:
        return HashOnly(rel, "too_large", key, size)
    data = b"".join(kept)
    if is_binary(data):
        return HashOnly(rel, "binary", key, size)
    stored = blobs.put(data, base=base)
    return Stored(rel, stored, size)


def _chunks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    for chunk in chunks:
        if chunk:
            yield chunk
