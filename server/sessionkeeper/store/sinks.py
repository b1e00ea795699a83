"""Where a recorder's bytes go: an O_APPEND file, or memory (for the contract suite).

A sink raises OSError (or a typed StoreIOError) on failure; the Recorder decides what a failure
means (cut off and given back, or read-only for good).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ..errors import StoreDamaged
from .layout import fsync_dir

_datasync = getattr(os, "fdatasync", os.fsync)
_CREATE = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class FileSink:
    """A new rollout file opened O_APPEND (0600); the parent directory is fsynced on creation.

    Its writer holds a shared flock on it while it is open, so `fsck --repair` never takes the
    still empty file of a session being started for one a crash left (`fsck.set_aside_empty`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, _CREATE, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_SH)
            os.fchmod(self.fd, 0o600)
            self._ino = os.fstat(self.fd).st_ino
            self.check(0)  # not set aside between its creation and the flock
            fsync_dir(path.parent)  # StoreIOError when it fails: the entry may not survive
        except BaseException:
            os.close(self.fd)  # never leak the descriptor of a file that did not start
            raise

    def write(self, data: bytes) -> None:
        """Write all of `data`, finishing short writes (EINTR is retried by Python)."""
        written = os.write(self.fd, data)
        if written < len(data):  # a short write: finish it (rare; signals, quotas)
            view = memoryview(data)[written:]
            while view:
                view = view[os.write(self.fd, view):]

    def truncate(self, size: int) -> None:
        """Cut the file back to `size` bytes (after a failed write)."""
        os.ftruncate(self.fd, size)

    def sync(self) -> None:
        """Make the written bytes durable; an OSError here is final (see Recorder).

        fdatasync where there is one (as SQLite does): the data and the size needed to read it
        back, without the timestamps fsync also flushes; fsync elsewhere.
        """
        _datasync(self.fd)

    def check(self, size: int) -> None:
        """Raise StoreDamaged if the file was replaced, removed or truncated under the writer."""
        info = os.fstat(self.fd)
        try:
            same = os.stat(self.path).st_ino == self._ino
        except FileNotFoundError:
            same = False
        if not same or info.st_size != size:
            raise StoreDamaged(
                f"{self.path} changed under its writer (expected {size} bytes, "
                f"found {info.st_size}{'' if same else ', file replaced or removed'})"
            )

    def close(self) -> None:
        """Close the descriptor."""
        os.close(self.fd)


class AppendSink(FileSink):
    """An existing rollout reopened O_APPEND to continue a session."""

    def __init__(self, path: Path) -> None:  # noqa: D107 - same contract as FileSink
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        self._ino = os.fstat(self.fd).st_ino


class MemorySink:
    """An in-memory rollout: the same recorder contract without a file system."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.syncs = 0

    def write(self, data: bytes) -> None:
        """Append `data`."""
        self.data += data

    def truncate(self, size: int) -> None:
        """Cut back to `size` bytes."""
        del self.data[size:]

    def sync(self) -> None:
        """Count a sync (memory is as durable as it gets)."""
        self.syncs += 1

    def check(self, size: int) -> None:
        """Raise StoreDamaged if the buffer does not hold `size` bytes."""
        if len(self.data) != size:
            raise StoreDamaged(f"memory rollout holds {len(self.data)} bytes, expected {size}")

    def close(self) -> None:
        """Nothing to release."""
