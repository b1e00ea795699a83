"""The open, writable session of a thread: its writer lock, its recorder, its index row.

Invariants: a writer exists only while it holds its thread's lock (released by `close`, also when
closing fails); its index row is refreshed at most every `_INDEX_EVERY_S` seconds while appending
(or when asked) and once more on close; its pending marker is removed only once the index holds
that row, so a crash or a busy index leaves it for `catch_up` (`catalog`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..clock import utc_now_iso
from ..events import Durability, Record

if TYPE_CHECKING:
    from filelock import BaseFileLock

    from .catalog import Catalog
    from .recorder import Ack, Recorder

_INDEX_EVERY_S = 2.0


class SessionWriter:
    """The open, writable session of a thread: holds the thread lock and the recorder."""

    def __init__(self, store: Catalog, *, meta: Record, path: Path, lock: BaseFileLock,
                 recorder: Recorder) -> None:
        self.store = store  # the Store that opened it, seen as its Catalog (layout, blobs, index)
        self.meta = meta
        self.path = path
        self._lock = lock
        self.recorder = recorder
        self.summary: dict[str, Any] | None = None
        self.pending: Path | None = None  # this session's marker until its row is in the index
        self._index_due = time.monotonic() + _INDEX_EVERY_S  # the next periodic index refresh

    @property
    def session_id(self) -> str:
        """This run's id."""
        return str(self.meta["session_id"])

    @property
    def thread_id(self) -> str:
        """The thread's stable id."""
        return str(self.meta["thread_id"])

    @property
    def last_seq(self) -> int:
        """The seq of the last record appended."""
        return self.recorder.next_seq - 1

    def append(self, bodies: list[bytes], durability: Durability | None = None, *,
               reindex: bool = False) -> list[Ack]:
        """Append encoded event bodies; refresh the index now and then (or when asked)."""
        acks = self.recorder.append(bodies, durability)
        if reindex or time.monotonic() > self._index_due:
            self.update_index()
        return acks

    def update_index(self) -> None:
        """Write this session's row to the index (fails soft: the pending marker stays)."""
        from .probe import session_row

        self._index_due = time.monotonic() + _INDEX_EVERY_S
        row = session_row(self.meta, path=self.store.layout.relative(self.path), archived=False,
                          last={"seq": self.last_seq, "ts": utc_now_iso()},
                          size=self.recorder.size, inode=None, summary=self.summary)
        if self.store.index_upsert([row]) and self.pending is not None:
            self.pending.unlink(missing_ok=True)
            self.pending = None

    def close(self) -> None:
        """Flush, fsync, update the index and release the thread lock."""
        try:
            self.recorder.close()
            self.update_index()
        finally:
            self._lock.release()
