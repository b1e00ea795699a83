"""The writer lock of a thread: one writer per thread, across processes (flock via filelock)."""

from __future__ import annotations

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
