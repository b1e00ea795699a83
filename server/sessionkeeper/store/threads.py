"""A thread's sessions in the store, and reading them: listing, the chain, the rollouts to replay.

Invariants: a thread is its chain — its first session, then each session resuming one before it
at the next seq; a rollout merely claiming the thread's id is `foreign`, never a member. Every
answer comes from the index (caught up and reconciled with the names on disk first), every read
of content from the rollouts; a row whose file moved (another process archived it) is followed
and its row corrected, a row pointing nowhere is dropped from the answer.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from .. import ids
from ..errors import StoreDamaged, UnknownThread
from .catalog import Catalog
from .index import FileCheckpoint, Index, ListQuery, SessionRow, ThreadRow, thread_order
from .index.overlay import OverlayIndex

if TYPE_CHECKING:  # reading is imported where first done: a listing needs the index alone
    from .reader import Rollout

_LOOKS = 10  # how often a file another process moves back and forth is looked for again


class Threads(Catalog):
    """The store's threads: which rollouts make each one, and reading them (no writing)."""

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
            for _ in range(_LOOKS):  # moved back meanwhile: seen at one of its places next time
                if path.exists():
                    return row
                moved = (self.layout.live_path(path) if row.archived
                         else self.layout.archived_path(path))
                if moved.exists():
                    break
            else:
                return None
        except (ValueError, StoreDamaged):  # a row that does not even point into its tree
            return None
        row = dataclasses.replace(row, path=self.layout.relative(moved), archived=not row.archived)
        self.index_upsert([row])
        return row

    def read_thread(self, thread_id: str, *, full: bool = False,
                    rows: list[SessionRow] | None = None) -> list[Rollout]:
        """Rollouts needed to rebuild a thread: newest back to the first holding a snapshot
        (`rows`: its sessions when the caller has them already)."""
        rows = self.thread_sessions(thread_id) if rows is None else rows
        out: list[Rollout] = []
        stale: list[SessionRow] = []
        for row in reversed(rows):
            row, rollout = self._read(row, full=full)
            out.append(rollout)
            if rollout.meta is not None and rollout.size != row.size:
                stale.append(_refreshed(row, rollout))
            if rollout.from_snapshot and not full:
                break
        if stale:  # a writer died before its last index update: catch the cache up
            self.index_upsert(stale)
        out.reverse()
        return out

    def _read(self, row: SessionRow, *, full: bool) -> tuple[SessionRow, Rollout]:
        """A session's rollout (whole, or from its latest snapshot) with its row, followed when
        another process moved the file meanwhile (archived, unarchived); UnknownThread if gone."""
        from .reader import read_latest, read_rollout

        for _ in range(_LOOKS):
            path = self.layout.resolve(row.path)
            try:
                return row, read_rollout(path) if full else read_latest(path)
            except FileNotFoundError:
                found = self._followed(row)
                if found is None:
                    break
                row = found
        raise UnknownThread(f"the rollout of session {row.session_id} is gone from "
                            f"{self.layout.root}")

    def session_path(self, session_id: str) -> Path:
        """The rollout of a session."""
        sid = ids.session_id(session_id)
        row = self._query(lambda index: index.session(sid))
        if row is None:
            raise UnknownThread(f"no session {sid} in {self.layout.root}")
        return self.layout.resolve(row.path)


def _refreshed(row: SessionRow, rollout: Rollout) -> SessionRow:
    """The index row of a session as its rollout now stands."""
    from .probe import session_row

    assert rollout.meta is not None
    last = rollout.records[-1] if rollout.records else rollout.meta
    status = "damaged" if rollout.damage else "ok"
    return session_row(rollout.meta, path=row.path, archived=row.archived, last=last,
                       size=rollout.size, inode=row.inode, status=status, summary=row.summary)
