"""The writer lock of a thread: one writer per thread, across processes (flock via filelock)."""

from __future__ import annotations

from filelock import BaseFileLock, FileLock, Timeout

from .. import ids
from ..errors import ThreadBusy
from .layout import Layout


def lock_thread(layout: Layout, thread_id: str, *, purpose: str) -> BaseFileLock:
    """Take a thread's writer lock now or raise ThreadBusy; the caller releases it."""
    thread = ids.thread_id(thread_id)
    lock = FileLock(layout.lock_path(thread), mode=0o600, thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise ThreadBusy(f"thread {thread} is open for writing in another process; "
                         f"cannot {purpose}") from None
    return lock
