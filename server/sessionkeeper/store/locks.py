"""Locks across processes (flock via filelock): the writer lock of a thread (one writer per
thread), the rebuild lock of the index (one process rebuilds a missing or unusable index) and the
moves lock of the rollouts (no rollout moves while gc looks for every one)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .. import ids
from ..errors import ThreadBusy
from .layout import Layout

if TYPE_CHECKING:
    from filelock import BaseFileLock


def lock_thread(layout: Layout, thread_id: str, *, purpose: str) -> BaseFileLock:
    """Take a thread's writer lock now or raise ThreadBusy; the caller releases it."""
    from filelock import FileLock, Timeout  # a writer's need: listing and checking never lock

    thread = ids.thread_id(thread_id)
    lock = FileLock(layout.lock_path(thread), mode=0o600, thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise ThreadBusy(f"thread {thread} is open for writing in another process; "
                         f"cannot {purpose}") from None
    return lock


def writer_alive(layout: Layout, thread_id: str) -> bool:
    """True while a process holds a thread's writer lock (probed for an instant, no file made)."""
    try:
        fd = os.open(layout.lock_path(thread_id), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (OSError, ValueError):  # no lock file: never written here; a bad id names no lock
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


REBUILD_WAIT_S = 60.0
"""How long a process waits for another one's rebuild of the index before rebuilding anyway."""


@contextlib.contextmanager
def index_rebuild_lock(layout: Layout) -> Iterator[None]:
    """Hold the store's index rebuild lock (waits for another process's rebuild to end)."""
    from filelock import FileLock, Timeout

    lock = FileLock(layout.root / "locks" / "index.lock", mode=0o600, thread_local=False)
    try:
        lock.acquire(timeout=REBUILD_WAIT_S)
    except Timeout:  # a rebuild that never ends (a stuck process): the index is only a cache
        yield
        return
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def rollout_moves_lock(layout: Layout, *, shared: bool, create: bool = True) -> Iterator[None]:
    """Hold the store's rollout moves lock (flock on `locks/moves.lock`, waits): shared while a
    thread's rollouts move between sessions/ and archived_sessions/ and their rows follow,
    exclusive while gc or fsck reads every rollout, so none is at the place the walk has passed
    and missing from the other. Without `create` (a read-only store) a missing lock file is
    not made: no rollout of the store has ever moved, and nothing is locked."""
    flags = os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_RDWR | os.O_CREAT if create else os.O_RDONLY)
    try:
        fd = os.open(layout.root / "locks" / "moves.lock", flags, 0o600)
    except FileNotFoundError:
        if create:
            raise
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
