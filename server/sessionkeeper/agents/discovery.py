"""Which of an agent's files changed since their checkpoints: a stat of every listed file, nothing read.

The cheap pass a listing makes on every call (`Agent.changes`): a file whose size, mtime and
inode (and its companions' size and mtime) match its stamp is neither opened nor turned into
objects. Reading the changed ones is `reading.py`'s.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .base import AgentFile, Changes, Entry, Stamp

if TYPE_CHECKING:
    from collections.abc import Iterator


class Lister(Protocol):
    """What a stat pass needs of an agent (`Agent`): its entries with their stats, and their files."""

    def stat_entries(self, root: Path) -> Iterator[tuple[Entry, os.stat_result | None]]:
        """The agent's entries under `root`, each with its stat (None when it vanished)."""

    def file_of(self, root: Path, entry: Entry) -> AgentFile:
        """The AgentFile of one entry."""


def companion_stats(paths: Sequence[str]) -> tuple[tuple[str, int, int], ...]:
    """(path, size, mtime_ns) of each companion file; (-1, -1) for one that is gone."""
    out = []
    for path in paths:
        try:
            st = os.stat(path)
            out.append((path, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((path, -1, -1))
    return tuple(out)


def changes(agent: Lister, roots: Sequence[Path], checkpoints: Mapping[str, Stamp]) -> Changes:
    """Agent.changes: stat every listed file and compare it with its checkpoint.

    The cyclic GC is off meanwhile: the loop makes only acyclic tuples and strings, and a full
    collection over the index's thousands of live checkpoints would cost more than the stats.
    """
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _changes(agent, roots, checkpoints)
    finally:
        if gc_was_enabled:
            gc.enable()


def _changes(agent: Lister, roots: Sequence[Path], checkpoints: Mapping[str, Stamp]) -> Changes:
    changed: list[AgentFile] = []
    unchanged: list[str] = []
    seen: set[str] = set()
    known, keep, note = checkpoints.get, unchanged.append, seen.add  # a hot loop
    for root in roots:
        for entry, st in agent.stat_entries(root):
            path = entry[0]
            note(path)
            cp = known(path)
            if cp is not None and st is not None and st.st_mtime_ns == cp.mtime_ns \
                    and st.st_size == cp.size and st.st_ino == cp.inode \
                    and (not entry[4] or companion_stats(entry[4]) == cp.companions):
                keep(path)
                continue
            changed.append(agent.file_of(root, entry))
    changed.sort(key=lambda f: str(f.path))
    prefixes = tuple(os.path.join(str(r), "") for r in roots)
    gone = sorted(p for p in checkpoints if p not in seen and p.startswith(prefixes))
    return Changes(changed, unchanged, gone)
