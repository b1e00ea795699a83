"""Which directories of the rollout tree changed since the last reconcile (marks the index keeps).

A directory's inode and ctime change whenever an entry is added to it, removed or renamed (a
copy tool can set mtime back, never ctime), so a directory whose mark is unchanged holds the
names it held when it was listed and is not listed again. ctime ticks coarsely: a change in the
tick a mark was taken in leaves it equal, so a mark taken within RACY_NS of its directory's change
is not trusted (that directory is listed again next time), nor is one of a directory holding a
rollout that could not be indexed.
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

from .index.rows import DirMark
from .layout import ROLLOUT_NAME, Layout

RACY_NS = 2_000_000_000


class TreeWalk(NamedTuple):
    """The rollouts in the directories listed, and every directory's new mark."""

    rollouts: list[tuple[str, bool]]  # (path, archived), sorted
    marks: dict[str, DirMark]


def walk_changed(layout: Layout, marks: dict[str, DirMark]) -> TreeWalk:
    """List the directories whose mark changed (or is not trusted); stat the others only."""
    now = time.time_ns()
    children: dict[str, list[str]] = {}
    for key in marks:
        children.setdefault(key.rpartition("/")[0], []).append(key)
    match = ROLLOUT_NAME.fullmatch
    root = f"{layout.root}/"
    rollouts: list[tuple[str, bool]] = []
    seen: dict[str, DirMark] = {}
    for top, archived in ((layout.sessions.name, False), (layout.archived.name, True)):
        stack = [top]
        while stack:
            key = stack.pop()
            try:
                info = os.stat(root + key)
                old = marks.get(key)
                if old is not None and old[2] and old[:2] == (info.st_ino, info.st_ctime_ns):
                    seen[key] = old
                    stack.extend(children.get(key, ()))
                    continue
                entries = list(os.scandir(root + key))
            except (FileNotFoundError, NotADirectoryError):  # gone meanwhile: its parent changed
                continue
            seen[key] = (info.st_ino, info.st_ctime_ns, info.st_ctime_ns < now - RACY_NS)
            for entry in entries:  # as scan_rollouts: a symlink to a directory is not followed
                if entry.is_dir():
                    if not entry.is_symlink():
                        stack.append(f"{key}/{entry.name}")
                elif match(entry.name):
                    rollouts.append((entry.path, archived))
    rollouts.sort()
    return TreeWalk(rollouts, seen)


def distrust(marks: dict[str, DirMark], root: str, paths: list[str]) -> dict[str, DirMark]:
    """`marks` with the directories of `paths` (rollouts that could not be indexed) untrusted."""
    out = dict(marks)
    for path in paths:
        key = os.path.relpath(os.path.dirname(path), root)
        if key in out:
            out[key] = (*out[key][:2], False)
    return out
