"""Workspace watching: files changed between agent turns become `file_change` events.

A Watcher runs watchfiles in one daemon thread for one workspace root. It is started when a
session becomes current (never at start-up) and imports watchfiles only then.

Bursts are coalesced: watchfiles batches changes until the tree has been quiet for `step_ms`
(at most `debounce_ms`); the batch then waits `settle_s` more, so that an agent's own report of
the same write (session/record) lands first; a path changed several times in a batch is hashed
once, in its final state.

What is recorded (`file_change_events`): a path whose content hash differs from the last version
the session recorded (by anyone); `before_hash` is that last version's hash, `after_hash` the
sha256 now (absent when the file is gone). For a file the session already touched, `after_hash`
is left out so that the session reads the file and keeps its content as a blob (a rewind can
then bring the user's edit back); other files are recorded by hash only (no blob work). Never
recorded: content equal to the last recorded
version (so an edit the agent reported itself is not recorded again), a file the session never saw
that is gone again, directories, paths escaping the root, and everything ignored (`.git/`, the
store, `node_modules`, `__pycache__`, `build`, `dist`, virtualenvs and tool caches).

Authors are chosen by the server (`SessionKeeperServer._author_of`): deletions are `external`;
other changes are `user`, except that when the editor syncs documents (it sent didOpen) a file
not open in the editor is `external`.

Git's own state is watched too (live drift): HEAD, refs and packed-refs of the worktree's git
directories (also when they lie outside the root, as in a linked worktree) mark a batch `git`.
While git holds `index.lock` (a checkout or merge is writing the tree) a batch waits until git
releases it (at most HOLD_MAX_S, then it is merged with the next batch), so the files a checkout
writes are handled together with its new HEAD and recognised as the checkout's
(`SessionKeeperServer.on_batch`), not as user edits. A batch in which git's state moved is not
settled: its files are the checkout's, not an agent's write about to be reported.

A batch watchfiles cannot deliver (it raises a RuntimeError on a file name that is not UTF-8,
for one) is lost, not the watch: the watch starts again after RESTART_S and hands over an
empty `git` batch, so the server looks at the workspace again (HEAD, live drift).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("sessionkeeper.lsp.watch")

IGNORED_DIRS = (
    ".git", ".hg", ".svn", "node_modules", "__pycache__", "build", "dist", ".venv", "venv",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", ".idea",
    ".eggs", ".cache",
)


GIT_STATE_FILES = ("HEAD", "packed-refs", "index.lock")
HOLD_MAX_S = 10.0  # a batch waits at most this long for git to release index.lock
RESTART_S = 1.0  # after a batch watchfiles could not deliver, watch again this much later


def is_git_state(rel: str) -> bool:
    """True for the paths (relative to a git directory) that say what is checked out."""
    return rel in GIT_STATE_FILES or (rel.startswith("refs/") and not rel.endswith(".lock"))


@dataclass(frozen=True)
class Change:
    """One path's state after a batch: workspace-relative POSIX path and its hash now."""

    path: str
    after_hash: str | None  # None: gone (or not a regular file)
    deleted: bool


def file_change_events(changes: Iterable[Change], *,
                       last: Callable[[str], dict[str, Any] | None],
                       author_of: Callable[[Change], str]) -> list[dict[str, Any]]:
    """The `file_change` events worth recording for `changes`, given each path's last version."""
    events: list[dict[str, Any]] = []
    for change in changes:
        previous = last(change.path)
        if previous is None and change.after_hash is None:
            continue  # never seen by the session and not there now
        if previous is not None and previous.get("hash") == change.after_hash:
            continue  # already the recorded version (the agent's own edit, or no real change)
        event: dict[str, Any] = {"type": "file_change", "path": change.path,
                                 "author": author_of(change)}
        if previous is not None and previous.get("hash"):
            event["before_hash"] = previous["hash"]
        if change.after_hash is not None and previous is None:
            event["after_hash"] = change.after_hash  # untouched: hash only
        elif change.after_hash is None:
            event["deleted"] = True
        events.append(event)
    return events


@dataclass(frozen=True)
class Batch:
    """One coalesced batch: the workspace files it changed, and whether git's HEAD or refs moved."""

    changes: list[Change]
    git: bool = False


def hash_changes(root: str, paths: Iterable[tuple[str, bool]]) -> list[Change]:
    """Hash each changed absolute path under `root`; (path, reported_deleted) pairs in."""
    from ..recovery.baseline import PathEscapesRoot, file_hash  # the first batch loads them

    out: list[Change] = []
    for path, reported_deleted in paths:
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        if rel.startswith("../") or rel == "..":
            continue
        try:
            digest = file_hash(root, rel)
        except (PathEscapesRoot, OSError):
            continue
        if digest is None and os.path.isdir(path):
            continue
        out.append(Change(rel, digest, deleted=digest is None and (reported_deleted
                                                                  or not os.path.exists(path))))
    return out


class Watcher:
    """Watches one workspace root in a daemon thread and hands over coalesced batches."""

    def __init__(self, root: str, *, on_changes: Callable[[Batch], Any],
                 ignore: Iterable[str] = (), git_dirs: Iterable[str] = (), debounce_ms: int = 400,
                 step_ms: int = 50, settle_s: float = 0.25) -> None:
        self.root = root
        self.on_changes = on_changes
        self.ignore = [os.path.realpath(p) for p in ignore]
        self.git_dirs = sorted({os.path.realpath(p) for p in git_dirs})
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.settle_s = settle_s
        self.ready = threading.Event()  # set once the OS watch is in place
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start watching in the background."""
        self._thread = threading.Thread(target=self._run, name="sessionkeeper-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop watching and wait (briefly) for the thread to end."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _filter(self) -> Any:
        from watchfiles import DefaultFilter

        git_dirs = self.git_dirs

        class Filter(DefaultFilter):
            def __call__(self, change: Any, path: str) -> bool:
                for git_dir in git_dirs:
                    if path.startswith(git_dir + os.sep):
                        return is_git_state(os.path.relpath(path, git_dir).replace(os.sep, "/"))
                return bool(super().__call__(change, path))

        return Filter(ignore_dirs=IGNORED_DIRS, ignore_paths=self.ignore)

    def _git_path(self, path: str) -> bool:
        return any(path.startswith(d + os.sep) for d in self.git_dirs)

    def _git_busy(self) -> bool:
        return any(os.path.exists(os.path.join(d, "index.lock")) for d in self.git_dirs)

    def _wait_for_git(self) -> bool:
        """Wait (briefly, bounded) until git releases index.lock; False if it still holds it."""
        deadline = time.monotonic() + HOLD_MAX_S
        while self._git_busy() and time.monotonic() < deadline and not self._stop.is_set():
            self._stop.wait(0.02)
        return not self._git_busy()

    def _paths(self) -> list[str]:
        outside = [d for d in self.git_dirs
                   if os.path.commonpath([d, os.path.realpath(self.root)]) != os.path.realpath(
                       self.root)]
        return [self.root, *outside]

    def _run(self) -> None:
        try:
            while self._watch() and not self._stop.wait(RESTART_S):
                self.on_changes(Batch([], git=True))  # what the lost batch held is unknown
        finally:
            self.ready.set()

    def _watch(self) -> bool:
        """Watch until stopped (False), or until watchfiles cannot deliver a batch (its
        RuntimeError; True: the batch is lost, watch again). Any other failure, such as a root
        that cannot be watched (OSError), is logged and ends the watch (False)."""
        try:
            from watchfiles import Change as Kind
            from watchfiles import watch

            batches = watch(*self._paths(), watch_filter=self._filter(),
                            debounce=self.debounce_ms, step=self.step_ms, stop_event=self._stop,
                            raise_interrupt=False, ignore_permission_denied=True,
                            yield_on_timeout=True, rust_timeout=1000)
            latest: dict[str, bool] = {}  # workspace path -> deleted, held while git is busy
            git_moved = False
            for batch in batches:
                self.ready.set()
                if self._stop.is_set():
                    break
                for kind, path in batch:
                    if self._git_path(path):
                        git_moved = True
                    else:
                        latest[path] = kind == Kind.deleted
                if not latest and not git_moved:
                    continue
                # a checkout still writing: wait for git; still busy after HOLD_MAX_S: next batch
                if self._git_busy() and not self._wait_for_git():
                    continue
                if not git_moved:
                    self._stop.wait(self.settle_s)  # let the agent's own report land first
                changes = hash_changes(self.root, sorted(latest.items()))
                moved, latest, git_moved = git_moved, {}, False
                if (changes or moved) and not self._stop.is_set():
                    self.on_changes(Batch(changes, git=moved))
        except RuntimeError as exc:  # e.g. "Unable to decode path" (a name that is not UTF-8)
            log.warning("watching %s lost a batch (%s); watching again", self.root, exc)
            return not self._stop.is_set()
        except Exception:  # noqa: BLE001 - a dead watcher must not take the server with it
            log.exception("watching %s stopped", self.root)
        return False
