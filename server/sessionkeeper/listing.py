"""Thread listings with a resume estimate: index rows plus one git look-up per page.

Owns the per-workspace baseline cache of a long-lived process (the language server): an entry
is used only while the files that move with HEAD (`.git/HEAD`, the branch's ref, packed-refs)
are unchanged (stat: mtime, size, inode), and for at most `ttl` seconds; `invalidate` drops
entries at once (the workspace watcher calls it). A listing never reads a rollout, and its
baselines are an estimate's: root commits, branch and HEAD, without the origin URL (two git calls,
run side by side when no entry knows the root commits).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import GitRefused
from .recovery.baseline import capture, from_head, head_of, identity_started

if TYPE_CHECKING:
    from .events import GitBaseline
    from .recovery.summary import BaselineSource, ResumeState, ThreadSummary
    from .store.index import ThreadRow

Stamp = tuple[tuple[int, int, int] | None, ...]


def _stamp(files: tuple[str, ...]) -> Stamp:
    out: list[tuple[int, int, int] | None] = []
    for name in files:
        try:
            st = os.stat(name)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)


def workspace_baseline(root: str) -> GitBaseline | None:
    """The git baseline of a workspace now, for an estimate: no origin URL asked (None outside
    git, missing, or refused by git)."""
    try:
        return capture(root, remote=False) if os.path.isdir(root) else None
    except GitRefused:
        return None


class BaselineCache:
    """Baselines of workspaces, reused while HEAD's files are unchanged (at most `ttl` s)."""

    def __init__(self, *, ttl: float = 5.0) -> None:
        self.ttl = ttl
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[float, tuple[str, ...], Stamp, GitBaseline | None]] = {}

    def get(self, root: str) -> GitBaseline | None:
        """The baseline of `root`: cached while valid, else captured (and cached)."""
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(root)
        if entry is not None and now - entry[0] < self.ttl and _stamp(entry[1]) == entry[2]:
            return entry[3]
        known = entry[3] if entry is not None else None
        early = identity_started(root, remote=False) if known is None else None
        try:
            head = head_of(root)
        except GitRefused:
            head = None
        if head is None:  # outside git, refused, unborn: asked step by step, never cached
            if early is not None:
                early.wait()
            return workspace_baseline(root)
        files = head.files()
        stamp = _stamp(files)
        baseline = from_head(head, known=known, remote=False, early=early)
        with self._lock:
            self._entries[root] = (now, files, stamp, baseline)
        return baseline

    def invalidate(self, root: str | None = None) -> None:
        """Forget one workspace's baseline (or every one)."""
        with self._lock:
            if root is None:
                self._entries.clear()
            else:
                self._entries.pop(root, None)


def summaries(rows: list[ThreadRow], *, workspace: str | None, baseline: GitBaseline | None,
              sources: Mapping[str, BaselineSource] | None = None) -> list[ThreadSummary]:
    """ThreadSummaries of index rows, each estimated against the workspace's baseline
    (`sources`: where an agent thread's baseline comes from, by thread id)."""
    from .recovery.summary import estimate_key, estimate_state, thread_summary

    given = sources or {}
    if not rows or workspace is None:  # no workspace: nothing to estimate against
        return [thread_summary(row, baseline=given.get(row.thread_id)) for row in rows]
    estimates: dict[tuple[Any, ...], tuple[ResumeState, str | None]] = {}

    def estimate(row: ThreadRow) -> tuple[ResumeState, str | None]:
        key = estimate_key(row)
        try:
            found = estimates.get(key)
        except TypeError:  # an unhashable value in a crafted summary: estimated on its own
            return estimate_state(row, baseline)
        if found is None:
            found = estimates[key] = estimate_state(row, baseline)
        return found

    return [thread_summary(row, estimate=estimate(row), baseline=given.get(row.thread_id))
            for row in rows]
