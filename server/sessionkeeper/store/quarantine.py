"""Quarantine: a torn tail is cut off its rollout and kept aside, never silently dropped."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import StoreDamaged, storage_error
from .layout import Layout, fsync_dir, parse_rollout_name
from .locks import lock_thread
from .reader import Rollout, read_rollout


@dataclass(frozen=True)
class Quarantined:
    """A torn tail cut off a rollout and kept aside."""

    session_id: str
    path: str  # where the bytes now live
    offset: int
    bytes: int
    reason: str


def quarantine_tail(layout: Layout, rollout: Rollout, *, locked: bool = False) -> Quarantined | None:
    """Move a rollout's torn tail into quarantine/ and cut the file back to its complete prefix.

    Needs the thread's writer lock (taken here unless the caller holds it: `locked`); while
    another writer holds it this raises ThreadBusy, since its last line may be in flight. The
    file is cut only once the whole tail is fsynced aside (else StoreFull / StoreIOError).
    """
    if rollout.tail is None or rollout.path is None or rollout.meta is None:
        return None
    name = parse_rollout_name(rollout.path.name)
    session = name.session_id if name else "unknown"
    lock = None if locked else lock_thread(layout, rollout.meta["thread_id"], purpose="cut its tail")
    try:
        path = layout.contained(rollout.path)
        tail = read_rollout(path).tail  # as the file is now, under the lock: not a stale read
        if tail is None:
            return None
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            data = os.pread(fd, os.fstat(fd).st_size - tail.offset, tail.offset)
            target, qfd = _new_quarantine_file(layout.quarantine, f"{session}.{tail.offset}")
            try:
                view = memoryview(data)
                while view:  # a full disk takes what fits (a short write), then ENOSPC
                    view = view[os.write(qfd, view):]
                os.fsync(qfd)
            except OSError as exc:  # the rollout keeps its tail: nothing is cut that is not kept
                target.unlink(missing_ok=True)
                raise storage_error(exc, f"the torn tail of session {session} could not be "
                                         f"set aside in {layout.quarantine}") from exc
            finally:
                os.close(qfd)
            fsync_dir(target.parent)
            os.ftruncate(fd, tail.offset)
            os.fsync(fd)
        finally:
            os.close(fd)
    finally:
        if lock is not None:
            lock.release()
    return Quarantined(session, str(target), tail.offset, len(data), tail.reason)


def _new_quarantine_file(folder: Path, stem: str) -> tuple[Path, int]:
    """A fresh quarantine file (never overwriting an earlier one): its path and open descriptor."""
    for n in range(1000):
        target = folder / (f"{stem}.torn" if n == 0 else f"{stem}.{n}.torn")
        try:
            return target, os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                   0o600)
        except FileExistsError:
            continue
    raise StoreDamaged(f"too many quarantined tails named {stem} in {folder}")
