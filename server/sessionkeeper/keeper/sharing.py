"""The Keeper's link to a shared index on PostgreSQL (`shared_index`): push, pull, the team's list.

Invariants: without `shared_index` nothing here runs (no psycopg, no network); with it, the local
store stays the truth and keeps working when the server cannot be reached — every shared step
fails soft: its error (password redacted) goes to `problems` and the local answer stands.
Only `sync()` raises, since syncing is what was asked. A session's thread is pushed when the
session closes; a thread is pulled before it is shown, checked or resumed.
"""

from __future__ import annotations

import sys
from functools import cached_property
from typing import TYPE_CHECKING

from ..errors import IndexUnavailable, ThreadBusy
from ..store.index import ListQuery, ThreadRow
from ..store.index.rows import newest_first

if TYPE_CHECKING:
    from ..session.live import Session
    from ..store.remote.lease import Lease, Taken
    from ..store.remote.pull import PullReport
    from ..store.remote.push import PushReport
    from ..store.remote.shared import Shared
    from .ground import Ground


class Sharing:
    """The shared index: the store's partition and copies on the server, the team's view."""

    def __init__(self, ground: Ground) -> None:
        """What `ground` says: `shared_index` (None: nothing here runs) and `read_only`."""
        self.ground = ground
        self.problems: list[str] = []  # why shared steps were skipped
        self._leases: dict[str, Lease] = {}

    @cached_property
    def shared(self) -> Shared | None:
        """The store's connection to the shared server (None: no shared index configured)."""
        if not self.ground.shared_index:
            return None
        from ..store.remote.identity import store_id
        from ..store.remote.shared import Shared

        return Shared(self.ground.shared_index, store_id=store_id(self.ground.store.layout.root))

    def close(self) -> None:
        """Close the connection to the shared server, if one was made (made again when needed)."""
        shared = self.__dict__.pop("shared", None)
        if shared is not None:
            shared.close()

    def _problem(self, what: str, exc: Exception) -> None:
        """Remember (and say on stderr, once each) why a shared step was skipped."""
        text = f"{what}: {exc}"
        if text not in self.problems:
            self.problems.append(text)
            print(f"sessionkeeper: {getattr(exc, 'name', 'error')}: {text}; "
                  "the local store answered", file=sys.stderr)

    def sync(self, *, thread_id: str | None = None) -> PushReport:
        """Push the store's sessions (of one thread) and blobs to the shared server."""
        from ..store.remote.push import push

        shared = self.shared
        if shared is None:
            raise IndexUnavailable("no shared index: give --index postgresql://… or set "
                                   "SESSIONKEEPER_INDEX")
        self.ground.live.flush(thread_id)
        return push(self.ground.store, shared, thread_id=thread_id)

    def pull(self, thread_id: str) -> PullReport | None:
        """Fetch what other machines recorded of a thread (None: no shared index, or unreachable)."""
        shared = self.shared
        if shared is None or self.ground.read_only:
            return None
        from ..store.remote.pull import pull_thread

        try:
            return pull_thread(self.ground.store, shared, thread_id)
        except IndexUnavailable as exc:
            self._problem("pull", exc)
            return None

    def take_lease(self, thread_id: str) -> Taken | None:
        """Take the shared lease of a thread before continuing it here (ThreadBusy: another
        machine continues it); None when already ours, or no shared index can be reached."""
        if self.shared is None or self.ground.read_only or thread_id in self._leases:
            return None
        from ..store.machine import host_name, user_name
        from ..store.remote.lease import Lease

        lease = Lease(self.shared.url, thread_id=thread_id, machine=host_name(), user=user_name())
        try:
            self.shared.partition()  # the server's tables made or migrated first
            taken = lease.take()
        except IndexUnavailable as exc:
            self._problem("lease", exc)  # offline: continued here without one
            return None
        self._leases[thread_id] = lease
        return taken

    def release_lease(self, thread_id: str) -> None:
        """Give a thread's lease back (if this Keeper holds one)."""
        lease = self._leases.pop(thread_id, None)
        if lease is not None:
            lease.release()

    def adopt(self, session: Session) -> None:
        """Take the shared lease of a session that just opened (ThreadBusy: closed again), and
        push its thread when it closes."""
        if self.ground.shared_index and not self.ground.read_only:
            try:
                self.take_lease(session.thread_id)
            except ThreadBusy:
                session.writer.close()
                raise
            session.after_close = self._share_closed

    def _share_closed(self, session: Session) -> None:
        """Push a closed session's thread (its rollout complete, its row in the index), then give
        its lease back: the next machine to take it pulls all of it."""
        if self.shared is not None:
            try:
                self.sync(thread_id=session.thread_id)
            except IndexUnavailable as exc:  # pushed by the next sync or close
                self._problem("push", exc)
        self.release_lease(session.thread_id)

    def shared_threads(self, query: ListQuery, local: list[ThreadRow]) -> list[ThreadRow]:
        """The local page merged with the team's (each thread as the row knowing most of it)."""
        shared = self.shared
        if shared is None:
            return local
        try:
            theirs = shared.threads(query)
        except IndexUnavailable as exc:
            self._problem("list", exc)
            return local
        merged = {t.thread_id: t for t in theirs}
        for row in local:
            other = merged.get(row.thread_id)
            if other is None or (newest_first(row), row.event_count) >= (newest_first(other),
                                                                          other.event_count):
                merged[row.thread_id] = row
        page = sorted(merged.values(), key=newest_first, reverse=True)
        return page[:max(0, query.limit)]
