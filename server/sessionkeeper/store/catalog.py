"""The store directory and its index, a self-repairing cache of the rollouts.

Invariants: the rollouts are the truth, the index is derived; it is reached only through its
interface (`index.base`), and any index failure is met by rebuilding it from the rollouts (a busy
one is answered from a scan instead, never set aside). A new session's pending marker is written
before its rollout and removed only once the index holds its row, so `catch_up` finds every
session a crash or a busy index left out; `_reconcile` indexes rollouts the index never heard of
(it lists only the directories changed since it last ran, and opens only unknown files).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..errors import IndexBusy, IndexUnavailable, StoreDamaged, storage_error
from .index import Index, IndexBackend, SessionRow
from .index.backends import ReadOnlyBackend, SqliteBackend
from .index.memory import MemoryIndex
from .index.rows import NO_MARKS, TreeMarks
from .layout import Layout, parse_rollout_name
from .tree import distrust, walk_changed

if TYPE_CHECKING:  # blobs and probing are imported where first used: a listing needs the index
    from .blobs import BlobStore

Progress = Callable[[int, int], None]
T = TypeVar("T")
_PENDING_GRACE_S = 60.0  # a marker whose rollout never appeared: kept this long (a start in flight)


class Catalog:
    """One store directory: its layout, its index (self-repairing) and their catching up."""

    def __init__(self, root: Path | str | None = None, *,
                 index_backend: IndexBackend | None = None, read_only: bool = False) -> None:
        """`read_only`: nothing is created or changed on disk (the index is kept in memory)."""
        self.read_only = read_only
        self.layout = Layout(root) if read_only else Layout(root).ensure()
        kind = ReadOnlyBackend if read_only else SqliteBackend
        self.backend: IndexBackend = index_backend or kind(self.layout.index_path)
        self._index: Index | None = None

    @cached_property
    def blobs(self) -> BlobStore:
        """The store's content-addressed blobs (`<store>/blobs/`)."""
        from .blobs import BlobStore

        return BlobStore(self.layout.root)

    def index(self, progress: Progress | None = None) -> Index:
        """The open index; a missing or unusable one is rebuilt from the rollouts first (a busy one
        raises IndexBusy: another process writes it)."""
        if self._index is not None and not self._index.is_current():
            self._index.close()  # replaced or removed by another process: reopen
            self._index = None
        if self._index is None:
            try:
                self._index = self.backend.open()
            except IndexBusy:
                raise  # another process writes it: nothing is wrong with it
            except IndexUnavailable:
                self._rebuild_unusable(progress)
        assert self._index is not None
        return self._index

    def _rebuild_unusable(self, progress: Progress | None = None, *, reopen: bool = True) -> None:
        """Set aside and rebuild an index that is missing or unusable — one process at a time;
        `reopen`: first try it again once the lock is ours (another process may have rebuilt it)."""
        if self.read_only:  # nothing on disk changes: the rebuild is kept in memory
            self.backend.set_aside()
            self.rebuild(progress)
            return
        from .locks import index_rebuild_lock

        with index_rebuild_lock(self.layout):
            if reopen:
                try:
                    self._index = self.backend.open()
                    return
                except IndexBusy:
                    raise
                except IndexUnavailable:
                    pass
            self.backend.set_aside()
            self.rebuild(progress)

    def _query(self, ask: Callable[[Index], T]) -> T:
        """Ask the index; one that fails mid-query is set aside, rebuilt, and asked again; a busy
        one is answered from the rollouts themselves (nothing is set aside)."""
        try:
            return ask(self.index())
        except IndexBusy:
            scanned = MemoryIndex()
            scanned.replace_all(self._scan())
            return ask(scanned)
        except IndexUnavailable:  # unusable, unless another process replaced it meanwhile
            replaced = self._index is not None and not self._index.is_current()
            self.close_index()
            self._rebuild_unusable(reopen=replaced)
            return ask(self.index())

    def session_rows(self, thread_id: str | None = None) -> list[SessionRow]:
        """The index's session rows (of one thread), in seq order."""
        return self._query(lambda index: index.sessions(thread_id))

    def close_index(self) -> None:
        """Close the index connection, if one is open (the next read opens it again)."""
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
            self.close_index()
            self.backend.set_aside()
            self.rebuild()
            return work(self.index())

    def index_upsert(self, rows: list[SessionRow]) -> bool:
        """Update index rows; True when they are in. A busy index is tried again later (the
        rows' pending markers stay); an unusable one is left for the next rebuild."""
        try:
            self.index().upsert(rows)
        except IndexBusy:
            return False
        except IndexUnavailable:
            self.close_index()
            return False
        return True

    def rebuild(self, progress: Progress | None = None) -> dict[str, int]:
        """Rebuild the index from the rollouts; returns counts.

        A live, healthy index is rewritten in place in one transaction (other processes keep
        their connections and see the old or the new rows); a missing or unusable one is built
        anew by the backend; a busy one raises IndexBusy (nothing is set aside). The tree is
        listed once: its marks are kept with the rows (the reconcile after it only stats them).
        """
        walk = walk_changed(self.layout, {})  # every directory listed, and its mark taken
        rows, failed = self._probe_all(walk.rollouts, progress)
        self.close_index()
        try:
            index = self.backend.open()
            index.replace_all(rows, tree=distrust(walk.marks, str(self.layout.root), failed))
        except IndexBusy:
            raise  # another process writes it: never set aside for that (try again later)
        except IndexUnavailable:
            self.backend.set_aside()
            index = self.backend.build(rows)
        self._index = index
        self._reconcile()  # sessions created by other processes while this one was scanning
        return {"sessions": len(rows), "threads": len({r.thread_id for r in rows}),
                "unindexable": len(failed)}

    def probe(self, path: str, archived: bool) -> SessionRow | str:
        """The index row of the rollout at `path`, or why it has none."""
        from .probe import probe_named

        if parse_rollout_name(os.path.basename(path)) is None:  # the store root, a directory...
            return "not a rollout file name"
        return probe_named(path, archived=archived, relpath=self.layout.relatives([path])[0])

    def _scan(self) -> list[SessionRow]:
        """Index rows for every rollout on disk."""
        return self._probe_all(self.layout.scan_rollouts(), None)[0]

    def _probe_all(self, found: list[tuple[str, bool]],
                   progress: Progress | None) -> tuple[list[SessionRow], list[str]]:
        """Index rows for the rollouts `found` (path, archived), and the files that have none."""
        from .probe import probe_named

        relpaths = self.layout.relatives([path for path, _ in found])
        rows, failed = [], []
        for number, ((path, archived), relpath) in enumerate(zip(found, relpaths, strict=True),
                                                             start=1):
            row = probe_named(path, archived=archived, relpath=relpath)
            if isinstance(row, SessionRow):
                rows.append(row)
            else:
                failed.append(path)
            if progress and (number % 50 == 0 or number == len(found)):
                progress(number, len(found))
        return rows, failed

    def mark_pending(self, session: str, path: Path) -> Path:
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

    def _reconcile(self) -> list[SessionRow]:
        """Index the session files on disk that the index does not know (it is only a cache).

        Lists only the directories that changed since the last reconcile (`tree`: their marks in
        the index), and opens only the unknown files there. Returns their rows.
        """
        try:
            marks = self.index().tree_marks()
        except (IndexBusy, IndexUnavailable):
            marks = NO_MARKS  # list everything, as the query below will find the index
        walk = walk_changed(self.layout, marks.dirs)
        found, failed = [], []
        if walk.rollouts:
            known = self._query(lambda index: index.session_ids())
            for path, archived in walk.rollouts:
                if path[-42:-6] in known:  # `…-<session id>.jsonl`: known, nothing to parse
                    continue
                name = parse_rollout_name(os.path.basename(path))
                if name and name.session_id not in known:
                    row = self.probe(path, archived)
                    if isinstance(row, SessionRow):
                        found.append(row)
                    else:
                        failed.append(path)
        if (not found or self.index_upsert(found)) and walk.marks != marks.dirs:
            dirs = distrust(walk.marks, str(self.layout.root), failed)
            with contextlib.suppress(IndexBusy, IndexUnavailable):  # listed again next time
                self.index().save_tree_marks(TreeMarks(marks.generation, dirs))
        return found
