"""A session's file history built the way phase 2 will record it: real files, real git, real blobs.

Each change is written to disk first, then captured (`recovery.content.capture`, against the
previous version as delta base); a file's first version carries what it held before the session:
its content at the baseline commit when tracked, its content when first seen (`see`) when not,
or `change: "create"` when it did not exist.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionkeeper.recovery.baseline import file_hash
from sessionkeeper.recovery.content import HashOnly, Missing, Stored, capture, capture_at_commit
from sessionkeeper.store.blobs import BlobStore

from .conftest import git


class FileSession:
    """Seqs, file history `{path: [version]}` and the blobs of one session over a real workspace."""

    def __init__(self, workspace: Path, blobs: BlobStore, *, limit_bytes: int = 10 << 20) -> None:
        self.workspace = workspace
        self.blobs = blobs
        self.commit = git(workspace, "rev-parse", "HEAD")
        self.limit = limit_bytes
        self.seq = 0
        self.history: dict[str, list[dict[str, Any]]] = {}
        self._seen: dict[str, Stored | HashOnly | Missing] = {}

    def event(self) -> int:
        """A record that is not a file change (a message, a tool call): the next seq."""
        self.seq += 1
        return self.seq

    def see(self, path: str) -> None:
        """The session sees an untracked file before changing it: keep its content as it is now."""
        self._seen[path] = capture(self.workspace, path, blobs=self.blobs, limit_bytes=self.limit)

    def write(self, path: str, data: bytes, *, author: str = "agent") -> int:
        """Write `data` to `path` on disk, then record the change; returns its seq."""
        target = self.workspace / path
        new = path not in self.history and path not in self._seen
        if new and target.exists() and not self._tracked(path):
            self.see(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return self.record(path, author=author)

    def delete(self, path: str, *, author: str = "agent") -> int:
        """Delete `path` on disk, then record the change; returns its seq."""
        if path not in self.history and path not in self._seen and not self._tracked(path):
            self.see(path)
        (self.workspace / path).unlink()
        return self.record(path, author=author)

    def record(self, path: str, *, author: str = "agent") -> int:
        """Record the file's current disk content as its next version (a file_change with no hashes)."""
        seq = self.event()
        versions = self.history.setdefault(path, [])
        version: dict[str, Any] = {"seq": seq, "author": author}
        if not versions:
            before = self._seen.pop(path, None) or capture_at_commit(
                self.workspace, path, commit=self.commit, blobs=self.blobs, limit_bytes=self.limit)
            if isinstance(before, Missing):
                version["change"] = "create"
            else:
                version["before_hash"] = before.hash
                if isinstance(before, HashOnly):
                    version["before_content"] = before.reason
        base = next((v["hash"] for v in reversed(versions) if v.get("hash") and not v.get("content")), None)
        now = capture(self.workspace, path, blobs=self.blobs, base=base, limit_bytes=self.limit)
        if isinstance(now, Missing):
            version.update(hash=None, change="delete")
        else:
            version["hash"] = now.hash
            if isinstance(now, HashOnly):
                version["content"] = now.reason
        versions.append(version)
        return seq

    def current(self) -> dict[str, str | None]:
        """Each history file's sha256 on disk now (None: absent)."""
        return {path: file_hash(self.workspace, path) for path in self.history}

    def _tracked(self, path: str) -> bool:
        return bool(git(self.workspace, "ls-files", "--", path))
