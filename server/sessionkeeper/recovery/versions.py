"""A file's recorded versions as typed values, and its state at any seq (for rewind, diff, trailers).

The input is the file-history subsystem's data, `{path: [version, ...]}`, one dict per
`file_change` record of that path:

    {"seq": 12, "hash": "<sha256>" | None, "author": "agent" | "user" | "external" | "rewind",
     "change": "create" | "modify" | "delete",   # optional; "create": the file did not exist before
     "content": "binary" | "too_large" | …,      # optional: why only the hash was kept (no blob)
     "before_hash": "<sha256>",                  # optional: the content just before this change
     "before_content": "binary" | …}             # optional: why only before_hash was kept

`hash` None means the file is absent after that change. Only the first version's `before_*`
fields matter here: they say what the file held before the session first changed it (its
content at the baseline commit, or when the session first saw it). Without them, and without
`change: "create"`, nothing is known from before the first version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .subsystems.file_history import norm_path

OURS = frozenset({"agent", "rewind"})
"""Authors whose versions a rewind may undo without asking: the agent's own and earlier rewinds'."""


@dataclass(frozen=True)
class Version:
    """One state of a file: its content hash (None: absent), who produced it, and at which seq.

    `seq` is None for the state before the session's first change of the file.
    """

    seq: int | None
    hash: str | None
    author: str = "agent"
    content: str | None = None  # why only the hash is known (binary, too_large, …); None: stored

    @property
    def label(self) -> str:
        """`seq 12, agent` or `before the session` (for diff headers)."""
        return "before the session" if self.seq is None else f"seq {self.seq}, {self.author}"

    @property
    def described(self) -> str:
        """`its version of seq 12 (agent)` or `its content before the session` (for reasons)."""
        if self.seq is None:
            return "its content before the session"
        return f"its version of seq {self.seq} ({self.author})"


History = Mapping[str, Sequence[Mapping[str, Any]]]


def versions_of(raw: Sequence[Mapping[str, Any]]) -> list[Version]:
    """The recorded versions of one file in seq order (versions without a seq are skipped)."""
    out = [Version(int(v["seq"]), v.get("hash"), str(v.get("author", "agent")), v.get("content"))
           for v in raw if v.get("seq") is not None]
    return sorted(out, key=lambda v: v.seq or 0)


def before_of(raw: Sequence[Mapping[str, Any]]) -> Version | None:
    """The state before the session's first recorded change of the file; None if not known."""
    dated = [v for v in raw if v.get("seq") is not None]
    if not dated:
        return None
    first = min(dated, key=lambda v: int(v["seq"]))
    if first.get("change") == "create":
        return Version(None, None, "external")
    if first.get("before_hash"):
        return Version(None, first["before_hash"], "external", first.get("before_content"))
    return None


def state_at(raw: Sequence[Mapping[str, Any]], seq: int | None) -> Version | None:
    """The file's state at `seq` (None: before every change); None when that state is unknown."""
    earlier = [v for v in versions_of(raw) if seq is not None and v.seq is not None and v.seq <= seq]
    return earlier[-1] if earlier else before_of(raw)


def normalised(history: History) -> dict[str, list[Mapping[str, Any]]]:
    """The history with every path normalised ("./a//b" -> "a/b"), versions of one path merged."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for path, raw in history.items():
        out.setdefault(norm_path(path), []).extend(raw)
    return out
