"""The store: creates, reads, lists, archives and repairs sessions; owns the index as a cache.

Data flows one way: rollouts are written first, the index is updated after (and may lag or be
lost); every read of truth goes to the rollouts. This module owns every change to a thread's
rollouts — start, re-attach, archive, delete — each under the thread's writer lock (a read-only
store takes none and changes nothing). The index and its catching up are `catalog`'s, a thread's
membership and reading `threads`'s, the open session `writer`'s.
"""

from __future__ import annotations

import dataclasses
import os
import time
import zlib
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from .. import ids
from ..clock import utc_now_iso
from ..errors import SchemaTooNew, SessionReadOnly, StoreDamaged, UnknownThread
from ..events import Durability, Record
from .catalog import Progress
from .layout import ensure_private_dir, fsync_dir
from .locks import lock_thread, rollout_moves_lock
from .threads import Threads
from .writer import SessionWriter

if TYPE_CHECKING:  # reading, writing and probing are imported where first done: a listing
    from filelock import BaseFileLock  # needs the index alone

    from .reader import Rollout

__all__ = ["Progress", "SessionWriter", "Store"]


class Store(Threads):
    """One store directory: rollouts (truth) plus an index (cache)."""

    # ---- writing ------------------------------------------------------------------------------

    def lock_thread(self, thread_id: str, *, purpose: str = "open for writing") -> BaseFileLock:
        """Take a thread's writer lock now or raise ThreadBusy; the caller releases it."""
        if self.read_only:
            raise SessionReadOnly(f"the store {self.layout.root} was opened read-only; "
                                  f"cannot {purpose}")
        return lock_thread(self.layout, thread_id, purpose=purpose)

    def create(self, meta: Record, body: bytes, *, first_seq: int = 0,
               durability: Durability = Durability.WRITTEN,
               lock: BaseFileLock | None = None) -> SessionWriter:
        """Start a session file for `meta` at `first_seq` (thread lock taken, meta fsynced).

        seq is thread-wide: a resumed or forked session continues after the seq it starts from.
        A `lock` already taken with lock_thread() passes to the writer.
        """
        session = ids.session_id(meta["session_id"])
        lock = lock or self.lock_thread(meta["thread_id"], purpose="start a session")
        from .recorder import Recorder
        from .sinks import FileSink

        sink: FileSink | None = None
        try:
            path = self.layout.new_rollout_path(session, datetime.now(timezone.utc))
            marker = self.mark_pending(session, path)  # before the file: a crash leaves a trace
            ensure_private_dir(path.parent, within=self.layout.root)
            fsync_dir(path.parent.parent)
            sink = FileSink(path)
            recorder = Recorder(sink, next_seq=first_seq, durability=durability)
            acks = recorder.append([body], Durability.DURABLE)
        except BaseException:
            if sink is not None:  # a start that failed leaves no empty rollout behind
                sink.close()
                path.unlink(missing_ok=True)
                marker.unlink(missing_ok=True)
            lock.release()
            raise
        meta = {**meta, "seq": acks[0].seq, "ts": utc_now_iso()}
        writer = SessionWriter(self, meta=meta, path=path, lock=lock, recorder=recorder)
        writer.pending = marker
        writer.update_index()
        return writer

    def reopen(self, session_id: str, *,
               durability: Durability = Durability.WRITTEN) -> tuple[SessionWriter, Rollout]:
        """Re-attach to the newest session of its thread to append more (thread lock taken).

        A torn tail is quarantined first so new records never follow a partial line.
        """
        sid = ids.session_id(session_id)
        row = self._query(lambda index: index.session(sid))
        if row is None:
            raise UnknownThread(f"no session {sid} in {self.layout.root}")
        from .machine import host_name

        if row.machine and row.machine != host_name():  # a copy pulled from another machine
            raise SessionReadOnly(f"session {sid} was recorded on {row.machine}; resume its "
                                  "thread to continue here")
        path = self.layout.resolve(row.path)
        lock = self.lock_thread(row.thread_id, purpose="record")
        try:  # read under the lock: nothing can be in flight now
            from .reader import Status, parse_rollout, read_bytes
            from .recorder import Recorder
            from .sinks import AppendSink

            data = read_bytes(path)
            rollout = parse_rollout(data, path=path)
            if rollout.status is Status.FUTURE_SCHEMA:
                raise SchemaTooNew(f"session {sid} was written by a newer Session Keeper "
                                   f"(schema {rollout.schema_version})")
            if rollout.meta is None or rollout.status is not Status.OK:
                lines = ", ".join(str(d.line) for d in rollout.damage)
                raise StoreDamaged(f"session {sid} cannot be appended to "
                                   f"({rollout.status.value}{': lines ' + lines if lines else ''});"
                                   " fork the thread to continue")
            newest = self.thread_sessions(row.thread_id)[-1].session_id
            if newest != rollout.meta["session_id"]:
                raise SessionReadOnly(f"session {sid} was resumed by {newest}; record there")
            if rollout.tail is not None:
                from .quarantine import quarantine_tail

                quarantine_tail(self.layout, rollout, locked=True)
            recorder = Recorder(AppendSink(path), next_seq=rollout.last_seq + 1,
                                size=rollout.good_size, crc=zlib.crc32(data[:rollout.good_size]),
                                durability=durability)
        except BaseException:
            lock.release()
            raise
        writer = SessionWriter(self, meta=rollout.meta, path=path, lock=lock, recorder=recorder)
        return writer, rollout

    # ---- export, delete, archive -----------------------------------------------------------

    def write_export(self, thread_id: str, data: dict[str, Any]) -> Path:
        """Write a thread's exported state to exports/ (a new private file); returns its path."""
        folder = ensure_private_dir(self.layout.root / "exports")
        path = folder / f"{ids.thread_id(thread_id)}-{int(time.time())}-{os.getpid()}.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(orjson.dumps(data, option=orjson.OPT_INDENT_2))
        return path

    def delete_thread(self, thread_id: str) -> int:
        """Delete a thread for good: its rollouts (live and archived), quarantined tails, index rows.

        Takes the thread's writer lock (ThreadBusy while it is open elsewhere); returns the
        rollouts removed (0 for an unknown thread). Files go first: a crash in between leaves
        index rows pointing nowhere, which reads skip and a rebuild drops; never a rollout the
        index forgot (the next reconcile would bring it back).
        """
        thread = ids.thread_id(thread_id)
        try:
            self.thread_sessions(thread)
        except UnknownThread:
            return 0
        lock = self.lock_thread(thread, purpose="delete it")
        try:
            try:
                rows = self.thread_sessions(thread)  # under the lock: nothing new can appear
            except UnknownThread:
                rows = []
            removed = 0
            for row in rows:
                path = self.layout.resolve(row.path)
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    continue
                fsync_dir(path.parent)
                removed += 1
                for torn in self.layout.quarantine.glob(f"{ids.session_id(row.session_id)}.*"):
                    torn.unlink(missing_ok=True)
            self._query(lambda index: index.forget(thread))
            return removed
        finally:
            lock.release()

    # ---- archive --------------------------------------------------------------------------------

    def set_archived(self, thread_id: str, archived: bool) -> int:
        """Move a thread's rollouts to archived_sessions/ (or back); returns files moved."""
        thread = ids.thread_id(thread_id)
        if all(r.archived == archived for r in self.thread_sessions(thread)):
            return 0  # already where it should be: nothing to move, no lock needed
        import shutil  # only moving rollouts needs it (with bz2 and lzma: 2 ms a listing skips)

        lock = self.lock_thread(thread, purpose="archive it" if archived else "unarchive it")
        try:
            rows, moved = [], 0
            with rollout_moves_lock(self.layout, shared=True):  # never while gc looks
                for row in self.thread_sessions(thread):
                    if row.archived == archived:
                        rows.append(row)
                        continue
                    src = self.layout.resolve(row.path)
                    dst = self.layout.archived_path(src) if archived else self.layout.live_path(src)
                    ensure_private_dir(dst.parent, within=self.layout.root)
                    shutil.move(src, dst)
                    fsync_dir(dst.parent)
                    fsync_dir(src.parent)
                    rows.append(dataclasses.replace(row, path=self.layout.relative(dst),
                                                    archived=archived))
                    moved += 1
                self.index_upsert(rows)
            return moved
        finally:
            lock.release()
