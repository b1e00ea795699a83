"""The only writer of a rollout: assigns seq, frames lines, writes them whole, reaches durability.

Invariants:
- each record is one complete line written by one write() on an O_APPEND descriptor, so a crash
  can only tear the last line;
- `append()` returns only when every record reached the requested durability (`written`: in the
  kernel, survives a process kill; `durable`: fsynced); `none` records may sit in a small buffer;
- concurrent durable waiters share fsyncs (group commit without any timer: whoever finds no
  fsync running starts one covering everything written so far);
- a failed fsync makes the recorder read-only for good (no retry: the kernel may have dropped
  the dirty pages): DurabilityLost, or StoreIOError when nothing of the file was acknowledged
  yet (the start of a session failed);
- a failed write is cut back off the file and its seqs are not consumed: StoreFull when the
  cause is space (ENOSPC, EDQUOT, EFBIG), StoreIOError otherwise (EIO, ...); if it cannot be cut
  off, or acknowledged buffered records went with it, the recorder is read-only for good.
"""

from __future__ import annotations

import threading
import time
from itertools import repeat
from typing import NamedTuple, NoReturn, Protocol

from ..clock import CLOCK, Millisecond
from ..errors import DurabilityLost, SessionReadOnly, StoreDamaged, StoreIOError, storage_error
from ..events import Durability
from .codec import crc32_function, frame

_BUFFER_LIMIT = 64 * 1024
_FOLD_BYTES = 64 * 1024  # the running CRC takes written lines in batches of this size
_NONE, _DURABLE = Durability.NONE, Durability.DURABLE
_ack = tuple.__new__  # builds an Ack without its Python-level __new__ (one frame less per append)
_time = time.time


class Sink(Protocol):
    """The byte destination of a recorder."""

    def write(self, data: bytes) -> None: ...
    def truncate(self, size: int) -> None: ...
    def sync(self) -> None: ...
    def check(self, size: int) -> None: ...
    def close(self) -> None: ...


class Ack(NamedTuple):
    """A record's seq and the durability it reached before append() returned."""

    seq: int
    durability: Durability
    duplicate: bool = False  # a re-delivery recognised and not written again


def _acks(first: int, level: Durability, count: int) -> list[Ack]:
    """The acks of `count` records from seq `first` (outside `append`: a comprehension there
    would turn its locals into cells, a cost on every call)."""
    return [_ack(Ack, (seq, level, False)) for seq in range(first, first + count)]


class Recorder:
    """Appends framed records to one sink; thread-safe; one per rollout.

    The running CRC (`crc`) covers every byte written: lines are folded into it in batches
    (every `_FOLD_BYTES`, and whenever it is read), and each batch also checks the sink.
    """

    def __init__(self, sink: Sink, *, next_seq: int = 0, size: int = 0, crc: int = 0,
                 durability: Durability = Durability.WRITTEN) -> None:
        self.sink = sink
        self.default = Durability(durability)
        self.next_seq = next_seq
        self._write_lock = threading.Lock()
        self._sync_cond = threading.Condition()
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._written = size  # bytes handed to the kernel
        self._crc = crc  # CRC32 of those bytes but the `_unfolded` lines written last
        self._unfolded: list[bytes] = []
        self._fold_at = size + _FOLD_BYTES  # fold (and check the sink) once _written reaches it
        self._crc32 = crc32_function()
        self._stamp: Millisecond = (0.0, 0.0, b"")  # the last stamp's millisecond (none yet)
        self._synced = size  # bytes covered by a finished fsync
        self._syncing = False
        self._failure: BaseException | None = None
        self._closed = False
        self._acknowledged = size > 0  # some append() returned (or the file held records)

    @property
    def size(self) -> int:
        """Bytes handed to the kernel so far (the file's size as this writer knows it)."""
        return self._written

    @property
    def crc(self) -> int:
        """CRC32 of every byte handed to the kernel so far."""
        with self._write_lock:
            self._fold_locked()
            return self._crc

    @property
    def read_only_reason(self) -> str | None:
        """Why the recorder no longer accepts records, or None."""
        if self._failure is not None:
            return f"needs recovery: {self._failure}"
        return "closed" if self._closed else None

    def append(self, bodies: list[bytes], durability: Durability | None = None) -> list[Ack]:
        """Frame and write event bodies (`{"type":…}` JSON); return when `durability` is reached."""
        if durability is None:
            level = self.default
        else:
            level = durability if durability.__class__ is Durability else Durability(durability)
        count = len(bodies)
        lock = self._write_lock
        lock.acquire()  # not `with`: that binds __enter__ and __exit__ anew on every call
        try:
            if self._failure is not None or self._closed:
                self._ensure_writable()
            first = self.next_seq
            start, end, ts = self._stamp
            now = _time()
            if not start <= now < end:  # the clock's own cache, without a call per record
                self._stamp = start, end, ts = CLOCK.millisecond(now)
            if count == 1 and level is not _NONE and not self._buffer:
                # the path of almost every record: `_write_locked` inline, one call less
                data = frame(first, ts, bodies[0])
                self.next_seq = first + 1
                try:
                    self.sink.write(data)
                except OSError as exc:
                    self._write_failed(exc, 1)
                self._written = written = self._written + len(data)
                self._unfolded.append(data)
                if written >= self._fold_at:
                    self._fold_locked(check=True)
            else:
                lines = list(map(frame, range(first, first + count), repeat(ts), bodies))
                self.next_seq = first + count
                if level is not _NONE:
                    self._flush_locked(lines)
                elif self._buffered + (size := sum(map(len, lines))) < _BUFFER_LIMIT:
                    self._buffer += lines
                    self._buffered += size
                else:  # written with the buffer: a failed write loses only what the buffer held
                    self._flush_locked(lines)
                written = self._written
        finally:
            lock.release()
        if level is _DURABLE:
            self._wait_synced(written)
        self._acknowledged = True
        if count == 1:
            return [_ack(Ack, (first, level, False))]
        return _acks(first, level, count)

    def sync(self) -> None:
        """Wait until everything written so far is fsynced (sharing fsyncs with other waiters)."""
        self._wait_synced(self._written)

    def flush(self, durability: Durability = Durability.WRITTEN) -> None:
        """Write out buffered records; with DURABLE also fsync them."""
        with self._write_lock:
            self._ensure_writable()
            self._flush_locked()
            end = self._written
        if durability is Durability.DURABLE:
            self._wait_synced(end)

    def close(self) -> None:
        """Flush what is buffered, fsync, and release the sink (also when those fail); later
        appends raise."""
        with self._write_lock:
            if self._closed:
                return
        try:
            with self._write_lock:
                if self._failure is None:
                    self._flush_locked()
                end = self._written
            if self._failure is None:
                self._wait_synced(end)
        finally:
            with self._write_lock:
                if not self._closed:
                    self._closed = True
                    self.sink.close()

    def _ensure_writable(self) -> None:
        reason = self.read_only_reason
        if reason is not None:
            raise SessionReadOnly(f"session is read-only ({reason})")

    def _flush_locked(self, lines: list[bytes] | None = None) -> None:
        """Write buffered lines and then `lines` with one write."""
        pending = self._buffer + lines if lines else self._buffer
        acked = len(self._buffer)
        self._buffer = []
        self._buffered = 0
        if pending:
            self._write_locked(b"".join(pending), len(pending), acked=acked)

    def _write_locked(self, data: bytes, count: int, *, acked: int = 0) -> None:
        """One write of `count` whole lines (`append` has this inline for a single line)."""
        try:
            self.sink.write(data)
        except OSError as exc:
            self._write_failed(exc, count, acked=acked)
        self._written += len(data)
        self._unfolded.append(data)
        if self._written >= self._fold_at:
            self._fold_locked(check=True)

    def _write_failed(self, exc: OSError, count: int, *, acked: int = 0) -> NoReturn:
        """Cut a failed write off and give its seqs back; raise what the failure means.

        When `acked` of them were already acknowledged (buffered `none` records), they are lost
        and their seqs were seen: the recorder becomes read-only instead (needs recovery).
        """
        try:
            self.sink.truncate(self._written)
        except OSError as cut:
            self._failure = cut
            raise DurabilityLost(f"write failed ({exc}) and its partial bytes could not be cut "
                                 f"off ({cut}); session is read-only") from exc
        if acked:
            self._failure = exc
            raise DurabilityLost(f"write failed, {acked} acknowledged buffered record(s) "
                                 f"lost; session is read-only: {exc}") from exc
        self.next_seq -= count
        raise storage_error(exc, f"write failed, {count} record(s) not written (cut off)") from exc

    def _fold_locked(self, *, check: bool = False) -> None:
        """Fold the lines written since the last fold into the running CRC (one call per batch);
        with `check`, also make sure the sink still is the file this writer wrote."""
        if self._unfolded:
            self._crc = self._crc32(b"".join(self._unfolded), self._crc)
            self._unfolded = []
            self._fold_at = self._written + _FOLD_BYTES
        if check:
            self._health_check_locked()

    def _health_check_locked(self) -> None:
        try:
            self.sink.check(self._written)
        except StoreDamaged as exc:
            self._failure = exc
            raise

    def _wait_synced(self, end: int) -> None:
        with self._sync_cond:
            while self._synced < end:
                if self._failure is not None:
                    raise DurabilityLost(f"fsync failed earlier: {self._failure}")
                if self._syncing:
                    self._sync_cond.wait()
                    continue
                self._syncing = True
                target = self._written
                self._sync_cond.release()
                error: OSError | None = None
                try:
                    self.sink.sync()
                except OSError as exc:
                    error = exc
                finally:
                    self._sync_cond.acquire()
                    self._syncing = False
                    self._sync_cond.notify_all()
                if error is not None:
                    self._failure = error
                    if not self._acknowledged:  # nothing of this file was ever acknowledged
                        raise StoreIOError(f"fsync of a new rollout failed: {error}") from error
                    raise DurabilityLost(f"fsync failed, session is read-only: {error}") from error
                self._synced = max(self._synced, target)


