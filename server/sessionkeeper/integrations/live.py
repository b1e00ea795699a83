"""The threads a framework adapter writes to: opened on first need, a few kept open, one lock each.

Invariants: a thread is written only inside `writing()`, under its own lock (which outlives the
session, so closing and re-opening a thread is serialized with its writers); at most `max_open`
sessions stay open — the least recently used one whose lock is free is closed first; a thread this
process wrote before is re-attached to the same session after it was closed, and one written by an
earlier process is continued the adapter's way (`continue_old`: a checked resume, or an attach).
Framework keys never name a path: they become UUIDs (`framework_thread_id`) before they touch one.
"""

from __future__ import annotations

import functools
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from ..api import Keeper
from ..errors import SessionReadOnly, UnknownThread
from ..session.live import Session
from ..store.index import ThreadRow

_NAMESPACE = uuid.UUID("6d1f3c2e-9b4a-5e7f-8c1d-2a3b4c5d6e7f")


@functools.lru_cache(maxsize=4096)
def framework_thread_id(framework: str, *parts: str) -> str:
    """The Session Keeper thread id of a framework's key: a uuid5, the same on every machine.

    The parts are encoded as a JSON array, so no two different keys share a name.
    """
    return str(uuid.uuid5(_NAMESPACE, orjson.dumps([framework, *parts]).decode()))


def keeper_of(store: Keeper | Path | str | None) -> Keeper:
    """A Keeper given as such, or one on the store at `store` (None: the default store)."""
    return store if isinstance(store, Keeper) else Keeper(store)


class LiveThreads:
    """Open sessions of the threads one adapter writes, by Session Keeper thread id."""

    def __init__(self, keeper: Keeper, *, max_open: int = 64) -> None:
        self.keeper = keeper
        self.max_open = max(1, max_open)
        self._open: OrderedDict[str, Session] = OrderedDict()
        self._mine: dict[str, str] = {}  # thread -> the session this process last wrote
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    def lock(self, thread_id: str) -> threading.RLock:
        """The lock every writer of `thread_id` in this process holds."""
        with self._guard:
            return self._locks.setdefault(thread_id, threading.RLock())

    def session(self, thread_id: str) -> Session | None:
        """The open session of a thread, or None (call under its lock); marks it recently used."""
        with self._guard:
            session = self._open.get(thread_id)
            if session is not None:
                self._open.move_to_end(thread_id)
        return session if session is not None and _usable(session) else None

    def open(self, thread_id: str, *, start: Callable[[], Session],
             continue_old: Callable[[ThreadRow], Session]) -> Session:
        """The thread's session (call under its lock): open, or started, re-attached, continued."""
        session = self.session(thread_id)
        if session is not None:
            return session
        session = self._opened(thread_id, start, continue_old)
        with self._guard:
            self._open[thread_id] = session
        self._evict()
        return session

    @contextmanager
    def writing(self, thread_id: str, *, start: Callable[[], Session],
                continue_old: Callable[[ThreadRow], Session]) -> Iterator[Session]:
        """Hold the thread's lock with its session open (see `open`)."""
        with self.lock(thread_id):
            yield self.open(thread_id, start=start, continue_old=continue_old)

    def _opened(self, thread_id: str, start: Callable[[], Session],
                continue_old: Callable[[ThreadRow], Session]) -> Session:
        mine = self._mine.get(thread_id)
        if mine is not None:
            try:
                session = self.keeper.attach(mine)
            except (UnknownThread, SessionReadOnly):  # deleted, or resumed by someone else
                del self._mine[thread_id]
            else:
                return session
        row = self.keeper.store.thread_row(thread_id)
        session = start() if row is None else continue_old(row)
        self._mine[thread_id] = session.session_id
        return session

    def _evict(self) -> None:
        """Close least recently used sessions beyond `max_open` (skipping ones in use)."""
        with self._guard:
            extra = len(self._open) - self.max_open
            candidates = list(self._open)[:max(0, extra)]
        for thread_id in candidates:
            lock = self.lock(thread_id)
            if lock.acquire(blocking=False):
                try:
                    self.close(thread_id)
                finally:
                    lock.release()

    def close(self, thread_id: str) -> None:
        """Close a thread's session (if open); the next write re-attaches it."""
        with self._guard:
            session = self._open.pop(thread_id, None)
        if session is not None and _usable(session):
            session.close()

    def forget(self, thread_id: str) -> None:
        """Close a thread's session and forget that this process wrote it (it was deleted)."""
        self.close(thread_id)
        self._mine.pop(thread_id, None)

    def close_all(self) -> None:
        """Close every open session (each under its thread's lock)."""
        with self._guard:
            threads = list(self._open)
        for thread_id in threads:
            with self.lock(thread_id):
                self.close(thread_id)


def _usable(session: Session) -> bool:
    return session.writer.recorder.read_only_reason is None
