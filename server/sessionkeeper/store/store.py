"""The store: creates, reads, lists, archives and repairs sessions; owns the index as a cache.

Data flows one way: rollouts are written first, the index is updated after (and may lag or be
lost); every read of truth goes to the rollouts. The index is reached only through its interface
(`index.base`); any index failure is met by rebuilding it from the rollouts.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
import zlib
from collections.abc import Callable
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from .. import ids
from ..clock import utc_now_iso
from ..errors import (
    IndexBusy,
    IndexUnavailable,
    SchemaTooNew,
    SessionReadOnly,
    StoreDamaged,
    UnknownThread,
    storage_error,
)
from ..events import Durability, Record
from .index import (
    FileCheckpoint,
    Index,
    IndexBackend,
    ListQuery,
    SessionRow,
    ThreadRow,
    thread_order,
)
from .index.memory import MemoryIndex
from .index.overlay import OverlayIndex
from .index.sqlite import ReadOnlyBackend, SqliteBackend
from .layout import Layout, ensure_private_dir, fsync_dir, parse_rollout_name
from .locks import lock_thread

if TYPE_CHECKING:  # reading, writing and probing are imported where first done: a listing
    from filelock import BaseFileLock  # needs the index alone

    from .blobs import BlobStore
    from .reader import Rollout
    from .recorder import Ack, Recorder

Progress = Callable[[int, int], None]
T = TypeVar("T")
_INDEX_EVERY_S = 2.0
_PENDING_GRACE_S = 60.0  # a marker whose rollout never appeared: kept this long (a start in flight)


class SessionWriter:
    """The open, writable session of a thread: holds the thread lock and the recorder."""

    def __init__(self, store: Store, *, meta: Record, path: Path, lock: BaseFileLock,
                 recorder: Recorder) -> None:
        self.store = store
        self.meta = meta
        self.path = path
        self._lock = lock
        self.recorder = recorder
        self.summary: dict[str, Any] | None = None
        self.pending: Path | None = None  # this session's marker until its row is in the index
        self._indexed_at = time.monotonic()

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
        if reindex or time.monotonic() - self._indexed_at > _INDEX_EVERY_S:
            self.update_index()
        return acks

    def update_index(self) -> None:
        """Write this session's row to the index (fails soft: the pending marker stays)."""
        from .probe import session_row

        self._indexed_at = time.monotonic()
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


class Store:
    """One store directory: rollouts (truth) plus an index (cache)."""

    def __init__(self, root: Path | str | None = None, *,
                 index_backend: IndexBackend | None = None, read_only: bool = False) -> None:
        """`read_only`: nothing is created or changed on disk (the index is kept in memory)."""
        self.read_only = read_only
        self.layout = Layout(root) if read_only else Layout(root).ensure()
        kind = ReadOnlyBackend if read_only else SqliteBackend
        self.backend: IndexBackend = index_backend or kind(self.layout.index_path)
        self._index: Index | None = None

    # ---- index, self-repairing -------------------------------------------------------------

    @cached_property
    def blobs(self) -> BlobStore:
        """The store's content-addressed blobs (`<store>/blobs/`)."""
        from .blobs import BlobStore

        return BlobStore(self.layout.root)

    def index(self, progress: Progress | None = None) -> Index:
        """The open index; a missing or unusable one is rebuilt from the rollouts first."""
        if self._index is not None and not self._index.is_current():
            self._index.close()  # replaced or removed by another process: reopen
            self._index = None
        if self._index is None:
            try:
                self._index = self.backend.open()
            except IndexUnavailable:
                self.backend.set_aside()
                self.rebuild(progress)
        assert self._index is not None
        return self._index

    def _query(self, ask: Callable[[Index], T]) -> T:
        """Ask the index; one that fails mid-query is set aside, rebuilt, and asked again; a busy
        one is answered from the rollouts themselves (nothing is set aside)."""
        try:
            return ask(self.index())
        except IndexBusy:
            scanned = MemoryIndex()
            scanned.replace_all(self._scan(None)[0])
            return ask(scanned)
        except IndexUnavailable:
            self._drop_index()
            self.backend.set_aside()
            self.rebuild()
            return ask(self.index())

    def _drop_index(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def with_index(self, work: Callable[[Index], T]) -> T:
        """Run `work` on the index (an unusable one is rebuilt and asked again); a busy one raises
        IndexBusy (nothing is set aside, nothing answered from a scan: the caller tries later)."""
        try:
            return work(self.index())
        except IndexBusy:
            raise
        except IndexUnavailable:
            self._drop_index()
            self.backend.set_aside()
            self.rebuild()
            return work(self.index())

    def imported_sessions(self, thread_id: str) -> list[tuple[SessionRow, FileCheckpoint]]:
        """The session rows of a thread read from agents' files, each with its file, in order."""
        thread = ids.thread_id(thread_id)

        def ask(index: Index) -> list[tuple[SessionRow, FileCheckpoint]]:
            out = []
            for row in index.sessions(thread):
                file = index.agent_file(row.path) if row.imported else None
                if file is not None and file.session_id == row.session_id:
                    out.append((row, file))
            return out

        return self._query(ask)

    def index_upsert(self, rows: list[SessionRow]) -> bool:
        """Update index rows; True when they are in. A busy index is tried again later (the
        rows' pending markers stay); an unusable one is left for the next rebuild."""
        try:
            self.index().upsert(rows)
        except IndexBusy:
            return False
        except IndexUnavailable:
            self._drop_index()
            return False
        return True

    def rebuild(self, progress: Progress | None = None) -> dict[str, int]:
        """Rebuild the index from the rollouts; returns counts.

        A live, healthy index is rewritten in place in one transaction (other processes keep
        their connections and see the old or the new rows); a missing or unusable one is built
        anew by the backend.
        """
        rows, skipped = self._scan(progress)
        self._drop_index()
        try:
            index = self.backend.open()
            index.replace_all(rows)
        except IndexUnavailable:
            self.backend.set_aside()
            index = self.backend.build(rows)
        self._index = index
        self._reconcile()  # sessions created by other processes while this one was scanning
        return {"sessions": len(rows), "threads": len({r.thread_id for r in rows}),
                "unindexable": skipped}

    def probe(self, path: str, archived: bool) -> SessionRow | str:
        """The index row of the rollout at `path`, or why it has none."""
        from .probe import probe

        return probe(path, archived=archived, relpath=self.layout.relative(path))

    def _scan(self, progress: Progress | None) -> tuple[list[SessionRow], int]:
        """Index rows for every rollout on disk, and how many files could not be indexed."""
        from .probe import probe

        found = self.layout.scan_rollouts()
        relpaths = self.layout.relatives([path for path, _ in found])
        rows, skipped = [], 0
        for number, ((path, archived), relpath) in enumerate(zip(found, relpaths, strict=True), start=1):
            row = probe(path, archived=archived, relpath=relpath)
            if isinstance(row, SessionRow):
                rows.append(row)
            else:
                skipped += 1
            if progress and (number % 50 == 0 or number == len(found)):
                progress(number, len(found))
        return rows, skipped

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
            marker = self._mark_pending(session, path)  # before the file: a crash leaves a trace
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

    def _mark_pending(self, session: str, path: Path) -> Path:
        """A marker naming a new session's rollout, until the index holds its row."""
        marker = self.layout.pending / session
        try:
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(self.layout.relative(path.parent) + "/" + path.name)
        except OSError as exc:
            marker.unlink(missing_ok=True)
            raise storage_error(exc, f"cannot start session {session}") from exc
        return marker

    def catch_up(self) -> list[SessionRow]:
        """Index the sessions whose pending marker is still there (a crash, a busy index).

        One directory listing when nothing is pending; returns the rows it could not write yet
        (the index is busy, or the store read-only) so a caller can answer with them anyway.
        """
        try:
            markers = [entry for entry in os.scandir(self.layout.pending) if entry.is_file()]
        except OSError:
            return []
        rows, done = [], []
        for entry in markers:
            try:
                with open(entry.path, encoding="utf-8") as handle:
                    relpath = handle.read().strip()
                path = self.layout.resolve(relpath)
            except (OSError, ValueError, StoreDamaged):
                continue
            if not path.exists() and self.layout.sessions in path.parents:
                path = self.layout.archived_path(path)  # archived meanwhile by another process
            if not path.exists():  # the process died before creating it: nothing to index
                if time.time() - entry.stat().st_mtime > _PENDING_GRACE_S:
                    Path(entry.path).unlink(missing_ok=True)
                continue
            row = self.probe(str(path), self.layout.archived in path.parents)
            if isinstance(row, SessionRow):
                rows.append(row)
                done.append(entry.path)
        if not rows or self.read_only or not self.index_upsert(rows):
            return rows
        for marker in done:
            Path(marker).unlink(missing_ok=True)
        return []

    def reopen(self, session_id: str, *,
               durability: Durability = Durability.WRITTEN) -> tuple[SessionWriter, Rollout]:
        """Re-attach to the newest session of its thread to append more (thread lock taken).

        A torn tail is quarantined first so new records never follow a partial line.
        """
        sid = ids.session_id(session_id)
        row = self._query(lambda index: index.session(sid))
        if row is None:
            raise UnknownThread(f"no session {sid} in {self.layout.root}")
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

    # ---- reading ------------------------------------------------------------------------------

    def list_threads(self, query: ListQuery) -> list[ThreadRow]:
        """A page of threads from the index (rebuilt first if it is missing or corrupt), caught
        up first with sessions whose row never made it there."""
        unwritten = self.catch_up()

        def ask(index: Index) -> list[ThreadRow]:
            if unwritten:  # answer with them although the index could not take them yet
                index = OverlayIndex(index)
                index.upsert(unwritten)
            return index.list_threads(query)

        return self._query(ask)

    def thread_row(self, thread_id: str) -> ThreadRow | None:
        """A thread's index row, or None."""
        thread = ids.thread_id(thread_id)
        return self._query(lambda index: index.thread(thread))

    def chain(self, thread_id: str) -> tuple[list[SessionRow], list[SessionRow]]:
        """(the thread's sessions, rollouts merely claiming it): both from one names walk."""
        return self._chain(thread_id)

    def thread_sessions(self, thread_id: str) -> list[SessionRow]:
        """Session rows of a thread, oldest first; UnknownThread if there are none.

        Only the thread's chain: its first session, then each session resuming one before it at
        the next seq. A rollout merely claiming the thread's id is not one of them (`foreign`).
        """
        return self._chain(thread_id)[0]

    def foreign_sessions(self, thread_id: str) -> list[SessionRow]:
        """Rollouts that claim a thread's id without continuing it (crafted or copied in)."""
        return self._chain(thread_id)[1]

    def _chain(self, thread_id: str) -> tuple[list[SessionRow], list[SessionRow]]:
        thread = ids.thread_id(thread_id)
        rows = [row for row in map(self._followed, self._query(lambda i: i.sessions(thread))) if row]
        rows += [r for r in self._reconcile() if r.thread_id == thread]
        if not rows:
            raise UnknownThread(f"no thread {thread} in {self.layout.root}")
        members: dict[str, SessionRow] = {}
        foreign = []
        for row in sorted(rows, key=thread_order):
            if self._continues(row, members):
                members[row.session_id] = row
            else:
                foreign.append(row)
        return list(members.values()), foreign

    def _continues(self, row: SessionRow, members: dict[str, SessionRow]) -> bool:
        """The first session of a thread, or one resuming a member at the seq after its last."""
        if not members:
            return row.resumed_from is None
        previous = members.get(row.resumed_from or "")
        if previous is None:
            return False
        if row.first_seq == previous.last_seq + 1:
            return True
        fresh = self.probe(str(self.layout.resolve(previous.path)), previous.archived)
        return isinstance(fresh, SessionRow) and row.first_seq == fresh.last_seq + 1

    def _followed(self, row: SessionRow) -> SessionRow | None:
        """A row whose file is gone: found again if another process (un)archived it, else None."""
        try:
            path = self.layout.resolve(row.path)
            if path.exists():
                return row
            moved = (self.layout.live_path(path) if row.archived
                     else self.layout.archived_path(path))
        except (ValueError, StoreDamaged):  # a row that does not even point into its tree
            return None
        if not moved.exists():
            return None
        row = dataclasses.replace(row, path=self.layout.relative(moved), archived=not row.archived)
        self.index_upsert([row])
        return row

    def _reconcile(self) -> list[SessionRow]:
        """Index the session files on disk that the index does not know (it is only a cache).

        Costs one walk of the file names; only unknown files are opened. Returns their rows.
        """
        known = self._query(lambda index: index.session_ids())
        found = []
        for path, archived in self.layout.scan_rollouts():
            if path[-42:-6] in known:  # `…-<session id>.jsonl`: a known session, nothing to parse
                continue
            name = parse_rollout_name(os.path.basename(path))
            if name and name.session_id not in known:
                row = self.probe(path, archived)
                if isinstance(row, SessionRow):
                    found.append(row)
        if found:
            self.index_upsert(found)
        return found

    def read_thread(self, thread_id: str, *, full: bool = False,
                    rows: list[SessionRow] | None = None) -> list[Rollout]:
        """Rollouts needed to rebuild a thread: newest back to the first holding a snapshot
        (`rows`: its sessions when the caller has them already)."""
        from .reader import read_latest, read_rollout

        rows = self.thread_sessions(thread_id) if rows is None else rows
        out: list[Rollout] = []
        stale: list[SessionRow] = []
        for row in reversed(rows):
            path = self.layout.resolve(row.path)
            rollout = read_rollout(path) if full else read_latest(path)
            out.append(rollout)
            if rollout.meta is not None and rollout.size != row.size:
                stale.append(_refreshed(row, rollout))
            if rollout.from_snapshot and not full:
                break
        if stale:  # a writer died before its last index update: catch the cache up
            self.index_upsert(stale)
        out.reverse()
        return out

    def session_path(self, session_id: str) -> Path:
        """The rollout of a session."""
        sid = ids.session_id(session_id)
        row = self._query(lambda index: index.session(sid))
        if row is None:
            raise UnknownThread(f"no session {sid} in {self.layout.root}")
        return self.layout.resolve(row.path)

    def write_export(self, thread_id: str, data: dict[str, Any]) -> Path:
        """Write a thread's exported state to exports/ (a new private file); returns its path."""
        folder = ensure_private_dir(self.layout.root / "exports")
        path = folder / f"{ids.thread_id(thread_id)}-{int(time.time())}-{os.getpid()}.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(orjson.dumps(data, option=orjson.OPT_INDENT_2))
        return path

    # ---- deleting -------------------------------------------------------------------------------

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
        lock = self.lock_thread(thread, purpose="archive it" if archived else "unarchive it")
        try:
            rows, moved = [], 0
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


def _refreshed(row: SessionRow, rollout: Rollout) -> SessionRow:
    from .probe import session_row

    """The index row of a session as its rollout now stands."""
    assert rollout.meta is not None
    last = rollout.records[-1] if rollout.records else rollout.meta
    status = "damaged" if rollout.damage else "ok"
    return session_row(rollout.meta, path=row.path, archived=row.archived, last=last,
                       size=rollout.size, inode=row.inode, status=status, summary=row.summary)
