"""Every version of every file the session wrote or saw, with its author; rewind to any seq.

Paths are as recorded (workspace-relative, normalised); a version's hash is None when the file was
deleted. A file's last version is what the disk must still hold for the session to continue blindly.

A version is `{seq, hash, author}` plus, when known, `change`, `content` (why no blob holds it:
binary, too_large, ..., or `not_captured` when the writer gave only the hash), `before_hash` and
`before_content` (the same for the content before the change) and `rewind_seq` — the shape
`recovery.versions` reads. A record that says `content: stored` has its blob; that word is not kept.
`seen` holds, per file, the content the session found before it changed the file (`change: seen`
records); it is no version and is never compared with the disk. A version marked `unknown` (a
`file_change` whose `data.unknown` lists `after_hash`: an agent's own log says the file was
written, not what it holds) is never compared with the disk either.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from .base import Difference, Findings, Record, Subsystem, Workspace, register


def norm_path(path: str) -> str:
    """Normalise a recorded path so one file has one key ("./a//b" -> "a/b")."""
    return posixpath.normpath(path.replace("\\", "/"))


NOT_CAPTURED = "not_captured"
"""A version's `content` when its writer gave the hash and Session Keeper never read the content."""
_FORMAT = 2  # snapshots before it knew no `content`: their versions were never captured


def kept(digest: str | None, content: str | None) -> str | None:
    """The `content` a version keeps for a recorded hash and `content` field (None: a blob holds it)."""
    if digest is None:
        return content if content not in (None, "stored") else None
    if content == "stored":
        return None
    return content or NOT_CAPTURED


def version_of(record: Record) -> dict[str, Any]:
    """The version a file_change record adds (optional keys only when known)."""
    version: dict[str, Any] = {"seq": record.get("seq"), "hash": record.get("after_hash"),
                               "author": record.get("author", "agent")}
    change = record.get("change") or ("delete" if record.get("deleted") else None)
    if change:
        version["change"] = change
    if (why := kept(record.get("after_hash"), record.get("content"))) is not None:
        version["content"] = why
    if record.get("before_hash") is not None:
        version["before_hash"] = record["before_hash"]
        if (why := kept(record["before_hash"], record.get("before_content"))) is not None:
            version["before_content"] = why
    if record.get("rewind_seq") is not None:
        version["rewind_seq"] = record["rewind_seq"]
    return version


@register
class FileHistory(Subsystem):
    """path -> list of versions in the order they were recorded; path -> content first seen."""

    name = "file_history"
    handles = frozenset({"file_change"})

    def __init__(self) -> None:
        self.files: dict[str, list[dict[str, Any]]] = {}
        self.seen: dict[str, dict[str, Any]] = {}

    def apply(self, record: Record) -> None:
        """Append the version a file_change records; a `seen` record of an unchanged file is kept aside."""
        path = norm_path(record["path"])
        version = version_of(record)
        if "after_hash" in (record.get("data") or {}).get("unknown", ()):
            version["unknown"] = True  # written, content not in the log (an agent's own log)
        if version.get("change") != "seen":
            self.files.setdefault(path, []).append(version)
        elif path not in self.files:  # seen after a change says nothing about before it
            self.seen[path] = version

    def snapshot(self) -> dict[str, Any]:
        """Return {"files": {path: [version, ...]}, "seen": {path: version}, "format": 2}.

        Versions are shared, not copied: one is never changed once recorded (lists only grow).
        """
        return {"files": {p: list(v) for p, v in self.files.items()}, "seen": dict(self.seen),
                "format": _FORMAT}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot (its versions taken as they are, lists copied)."""
        self.files = {p: list(v) for p, v in state.get("files", {}).items()}
        self.seen = dict(state.get("seen", {}))
        if state.get("format") != _FORMAT:
            self.files = {p: [{"content": NOT_CAPTURED, **v} if v.get("hash") is not None else v
                              for v in versions] for p, versions in self.files.items()}

    def before(self, path: str) -> dict[str, Any] | None:
        """What the file held before the session first changed it, as far as known (or None)."""
        versions = self.files.get(norm_path(path))
        if versions:
            first = versions[0]
            if first.get("change") == "create":
                return {"hash": None}
            if first.get("before_hash") is not None:
                return {"hash": first["before_hash"], "content": first.get("before_content")}
            return None
        seen = self.seen.get(norm_path(path))
        return None if seen is None else {"hash": seen.get("hash"), "content": seen.get("content")}

    def hashes(self) -> set[str]:
        """Every content hash the history names (versions, their before hashes, files seen)."""
        out = {v[k] for vs in self.files.values() for v in vs for k in ("hash", "before_hash")
               if v.get(k)}
        return out | {v["hash"] for v in self.seen.values() if v.get("hash")}

    def not_kept(self, key: str) -> str | None:
        """Why the content of `key` was never kept (binary, too_large, ...), None if it was."""
        found: list[str | None] = []
        for v in [*(v for vs in self.files.values() for v in vs), *self.seen.values()]:
            if v.get("hash") == key:
                found.append(v.get("content"))
            if v.get("before_hash") == key:
                found.append(v.get("before_content"))
        return None if not found or None in found else found[0]

    def needed(self) -> set[str]:
        """The hashes a rewind of the latest state needs: each file's last version and its before."""
        out: set[str] = set()
        for path, versions in self.files.items():
            before = self.before(path)
            out |= {h for h in (versions[-1].get("hash"), before and before.get("hash")) if h}
        return out | {v["hash"] for v in self.seen.values() if v.get("hash")}

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
            version = self.files[path][-1]
            if version.get("unknown"):  # nothing recorded to compare the disk with
                continue
            last = {"path": path, **{k: version.get(k) for k in ("seq", "hash", "author")}}
            try:
                now = workspace.file_hash(path)
            except ValueError:  # the path escapes the workspace: never read it
                if version.get("content") == "outside_workspace":
                    continue  # recorded as outside (never read): nothing to compare
                detail = f"{path} is outside the workspace"
                diffs.append(Difference("file_missing", last, None, detail))
                continue
            except OSError as exc:  # a symlink loop, a socket, no permission: this file only
                current = {"path": path, "hash": None, "author": "external"}
                diffs.append(Difference("file_missing", last, current,
                                        f"{path} cannot be read ({exc.strerror or exc})"))
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
