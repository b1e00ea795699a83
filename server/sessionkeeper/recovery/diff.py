"""Unified diffs of a session's file changes between two seqs, from blobs, with each version's author.

One diff per recorded version in the range (from the state before it to it), headed with the
seq and author of both sides; or, squashed, one diff per file across the whole range. A side
without readable content (hash only, binary, blob missing or corrupt, unknown) is named in
`note` instead of a diff. Reads blobs only; never the workspace.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import BlobUnavailable
from ..store.blobs import BlobStore
from .content import is_binary
from .subsystems.file_history import norm_path
from .versions import History, Version, normalised, state_at, versions_of

_NO_EOL = "\\ No newline at end of file\n"


@dataclass(frozen=True)
class FileDiff:
    """The change of one file from `old` to `new`; `text` is None when it cannot be shown (`note`)."""

    path: str
    old: Version | None  # None: unknown (nothing recorded before the first version)
    new: Version
    text: str | None
    note: str = ""

    @property
    def author(self) -> str:
        """Who produced the new side."""
        return self.new.author


def diff_history(history: History, *, blobs: BlobStore, from_seq: int | None = None,
                 to_seq: int | None = None, path: str | None = None, squash: bool = False,
                 context: int = 3) -> list[FileDiff]:
    """Diffs of every version recorded after `from_seq` up to `to_seq` (all files, or `path`).

    `from_seq` None starts before the session's first change; `to_seq` None ends at the last version.
    """
    files = normalised(history)
    paths = sorted(files) if path is None else [norm_path(path)]
    out: list[FileDiff] = []
    for name in paths:
        raw = files.get(name, [])
        picked = [v for v in versions_of(raw) if v.seq is not None
                  and (from_seq is None or v.seq > from_seq) and (to_seq is None or v.seq <= to_seq)]
        if not picked:
            continue
        old = state_at(raw, from_seq)
        if squash:
            authors = "+".join(dict.fromkeys(v.author for v in picked))
            last = picked[-1]
            pairs = [(old, Version(last.seq, last.hash, authors, last.content))]
        else:
            pairs = list(zip([old, *picked[:-1]], picked, strict=True))
        out += [_diff(name, a, b, blobs=blobs, context=context)
                for a, b in pairs if a is None or a.hash != b.hash]
    return out


def _diff(path: str, old: Version | None, new: Version, *, blobs: BlobStore, context: int) -> FileDiff:
    if old is None:
        return FileDiff(path, None, new, None, "no content is known from before this version")
    sides: list[bytes] = []
    for side in (old, new):
        content = _content(side, blobs)
        if isinstance(content, str):
            return FileDiff(path, old, new, None, f"{side.label}: {content}")
        sides.append(content)
    if any(is_binary(s) for s in sides):
        return FileDiff(path, old, new, None, "binary files differ")
    a, b = (_lines(s) for s in sides)
    before = "/dev/null" if old.hash is None else f"a/{path}"
    after = "/dev/null" if new.hash is None else f"b/{path}"
    lines = difflib.unified_diff(a, b, before, after, f"({old.label})", f"({new.label})", n=context)
    return FileDiff(path, old, new, "".join(_terminated(lines)))


def _lines(data: bytes) -> list[str]:
    """The content's lines as git counts them: each ended by `\\n` only (a form feed or a lone CR
    is no line break); bytes that are not UTF-8 shown as `\\xe9` (as U+FFFD, a change of one to
    another vanished)."""
    *lines, last = data.decode("utf-8", "backslashreplace").split("\n")
    return [line + "\n" for line in lines] + ([last] if last else [])


def _content(version: Version, blobs: BlobStore) -> bytes | str:
    """A version's bytes (empty when absent), or why they cannot be read."""
    if version.hash is None:
        return b""
    if version.content:
        return f"content not stored ({version.content})"
    try:
        return blobs.get(version.hash)
    except BlobUnavailable as exc:
        return f"content unreadable ({exc.name}: {exc.reason})"


def _terminated(lines: Iterator[str]) -> Iterator[str]:
    """Diff lines each ending in a newline; a last line without one gets git's marker after it."""
    for line in lines:
        if line.endswith("\n"):
            yield line
        else:
            yield line + "\n" + _NO_EOL


def render(diffs: Sequence[FileDiff]) -> str:
    """All diffs as one text: each file's unified diff, or a line saying why there is none."""
    parts: list[str] = []
    for d in diffs:
        if d.text is not None:
            parts.append(d.text)
        else:
            old = d.old.label if d.old else "unknown"
            parts.append(f"--- {d.path} ({old})\n+++ {d.path} ({d.new.label})\n# {d.note}\n")
    return "".join(parts)


def as_dict(diff: FileDiff) -> dict[str, Any]:
    """A diff as JSON-able data (for `--json` and the LSP in phase 2)."""
    def side(v: Version | None) -> dict[str, Any] | None:
        return None if v is None else {"seq": v.seq, "hash": v.hash, "author": v.author}
    return {"path": diff.path, "old": side(diff.old), "new": side(diff.new), "author": diff.author,
            "diff": diff.text, "note": diff.note}
