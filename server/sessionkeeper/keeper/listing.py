"""Thread listings with a resume estimate: index rows plus one git look-up per page.

Owns the per-workspace baseline cache of a long-lived process (the language server): an entry
is used only while the files that move with HEAD (`.git/HEAD`, the branch's ref, packed-refs)
are unchanged (stat: mtime, size, inode), and for at most `ttl` seconds; `invalidate` drops
entries at once (the workspace watcher calls it). A capture can start ahead, on a thread of its
own (`get_soon`: the server's first listing, while its Keeper is being made). A listing never
reads a rollout, and its baselines are an estimate's: root commits, branch and HEAD, without the
origin URL (two git calls, run side by side when no entry knows the root commits).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import GitRefused
from ..recovery.baseline import capture, from_head, head_of, identity_started

if TYPE_CHECKING:
    from concurrent.futures import Future

    from ..events import GitBaseline
    from ..recovery.summary import BaselineSource, ResumeState, ThreadSummary
    from ..store.index import ThreadRow

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
    """Baselines of workspaces, reused while HEAD's files are unchanged (at most `ttl` s); a
    capture started ahead (`get_soon`) is waited for by the `get` that needs it."""

    def __init__(self, *, ttl: float = 5.0) -> None:
        self.ttl = ttl
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[float, tuple[str, ...], Stamp, GitBaseline | None]] = {}
        self._ahead: dict[str, Future[GitBaseline | None]] = {}

    def get(self, root: str) -> GitBaseline | None:
        """The baseline of `root`: cached while valid, else the one being captured ahead, else
        captured (and cached)."""
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(root)
            ahead = self._ahead.get(root)
        if entry is not None and now - entry[0] < self.ttl and _stamp(entry[1]) == entry[2]:
            return entry[3]
        if ahead is not None:
            return ahead.result()
        return self._capture(root, entry, None)

    def get_soon(self, root: str) -> None:
        """Start capturing `root`'s baseline on a thread of its own, unless a valid entry or a
        capture ahead has it: git then runs while the caller does other work."""
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(root)
            if root in self._ahead or (entry is not None and now - entry[0] < self.ttl
                                       and _stamp(entry[1]) == entry[2]):
                return
            from concurrent.futures import Future  # here: it loads logging (a CLI listing need not)

            future: Future[GitBaseline | None] = Future()
            self._ahead[root] = future

        def capture() -> None:
            try:
                future.set_result(self._capture(root, entry, future))
            except BaseException as exc:  # noqa: BLE001 - the get waiting for it raises it
                future.set_exception(exc)
            finally:
                with self._lock:
                    if self._ahead.get(root) is future:
                        del self._ahead[root]

        threading.Thread(target=capture, name="sessionkeeper-baseline", daemon=True).start()

    def _capture(self, root: str, entry: tuple[float, tuple[str, ...], Stamp,
                                               GitBaseline | None] | None,
                 ahead: Future[GitBaseline | None] | None) -> GitBaseline | None:
        """Capture `root`'s baseline and cache it (a capture ahead: unless forgotten meanwhile)."""
        now = time.monotonic()
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
            if ahead is None or self._ahead.get(root) is ahead:
                self._entries[root] = (now, files, stamp, baseline)
        return baseline

    def invalidate(self, root: str | None = None) -> None:
        """Forget one workspace's baseline (or every one), and a capture ahead of it: its answer
        is not kept, and the next `get` captures again."""
        with self._lock:
            if root is None:
                self._entries.clear()
                self._ahead.clear()
            else:
                self._entries.pop(root, None)
                self._ahead.pop(root, None)


def summaries(rows: list[ThreadRow], *, workspace: str | None, baseline: GitBaseline | None,
              sources: Mapping[str, BaselineSource] | None = None) -> list[ThreadSummary]:
    """ThreadSummaries of index rows, each estimated against the workspace's baseline
    (`sources`: where an agent thread's baseline comes from, by thread id)."""
    from ..recovery.summary import estimate_key, estimate_state, thread_summary

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
