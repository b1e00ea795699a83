"""Every version of every file the session wrote or saw, with its author; rewind to any seq.

Paths are as recorded (workspace-relative, normalised); a version's hash is None when the file was
deleted. A file's last version is what the disk must still hold for the session to continue blindly.
A version marked `unknown` (a `file_change` whose `data.unknown` lists `after_hash`: an agent's own
log says the file was written, not what it holds) is never compared with the disk.
"""

from __future__ import annotations

import copy
import posixpath
from collections.abc import Mapping
from typing import Any

from .base import Difference, Findings, Record, Subsystem, Workspace, register


def norm_path(path: str) -> str:
    """Normalise a recorded path so one file has one key ("./a//b" -> "a/b")."""
    return posixpath.normpath(path.replace("\\", "/"))


@register
class FileHistory(Subsystem):
    """path -> list of versions {seq, hash, author} in the order they were recorded."""

    name = "file_history"
    handles = frozenset({"file_change"})

    def __init__(self) -> None:
        self.files: dict[str, list[dict[str, Any]]] = {}

    def apply(self, record: Record) -> None:
        """Append the version a file_change records (its after_hash, by its author)."""
        version = {"seq": record.get("seq"), "hash": record.get("after_hash"),
                   "author": record.get("author", "agent")}
        if "after_hash" in (record.get("data") or {}).get("unknown", ()):
            version["unknown"] = True  # written, content not in the log (an agent's own log)
        self.files.setdefault(norm_path(record["path"]), []).append(version)

    def snapshot(self) -> dict[str, Any]:
        """Return {"files": {path: [version, ...]}}."""
        return {"files": copy.deepcopy(self.files)}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.files = copy.deepcopy(state.get("files", {}))

    def last(self, path: str) -> dict[str, Any] | None:
        """Return the newest recorded version of `path`, or None if the session never saw it."""
        versions = self.files.get(norm_path(path))
        return dict(versions[-1]) if versions else None

    def rewind(self, seq: int) -> dict[str, dict[str, Any]]:
        """Return each file's newest version with seq <= `seq` (files first seen later: absent)."""
        out: dict[str, dict[str, Any]] = {}
        for path, versions in self.files.items():
            earlier = [v for v in versions if v["seq"] is not None and v["seq"] <= seq]
            if earlier:
                out[path] = dict(earlier[-1])
        return out

    def changed_after(self, seq: int) -> list[str]:
        """Return the paths with a version recorded after `seq`, sorted."""
        return sorted(p for p, vs in self.files.items()
                      if any(v["seq"] is not None and v["seq"] > seq for v in vs))

    def disk_differences(self, workspace: Workspace) -> list[Difference]:
        """Compare each file's last version with the disk: file_changed / file_missing (external).

        `recorded` is the last version {path, seq, hash, author}; `current` is {path, hash, author}
        with author "external" (the session did not record that content).
        """
        if not workspace.exists:  # nothing to compare: the worktree reports cwd_missing
            return []
        diffs: list[Difference] = []
        for path in sorted(self.files):
            last = {"path": path, **self.files[path][-1]}
            if last.get("unknown"):  # nothing recorded to compare the disk with
                continue
            try:
                now = workspace.file_hash(path)
            except ValueError:  # the path escapes the workspace: never read it
                detail = f"{path} is outside the workspace"
                diffs.append(Difference("file_missing", last, None, detail))
                continue
            if now == last["hash"]:
                continue
            current = {"path": path, "hash": now, "author": "external"}
            if now is None:
                diffs.append(Difference("file_missing", last, current, f"{path} is missing"))
            else:
                diffs.append(Difference("file_changed", last, current,
                                        f"{path} changed outside the session"))
        return diffs

    def validate(self, workspace: Workspace, deps: Mapping[str, Subsystem]) -> Findings:
        """Report files whose disk content is not the last version the session recorded."""
        return Findings(differences=self.disk_differences(workspace))

    def summary(self) -> dict[str, Any]:
        """Return how many files and versions the history holds."""
        return {"files": len(self.files), "versions": sum(len(v) for v in self.files.values())}

    def headline(self) -> str:
        """Files and versions the history holds."""
        versions = sum(len(v) for v in self.files.values())
        return f"{len(self.files)} file(s), {versions} version(s)"
