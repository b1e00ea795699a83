"""Reading LangGraph threads back from the store: the newest checkpoints, whole histories, tuples.

Invariants: the newest checkpoint of a thread this process writes comes from its live session's
state (under the thread's lock); any other thread's from its log's latest snapshot and tail, and a
whole history from its whole log; both folded results are kept while the log is unchanged (its
newest session and that session's size), for a few threads. Payloads are decoded only here, by the
framework's serializer.
"""

from __future__ import annotations

import copy
import logging
import os
import threading
from collections import OrderedDict
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple, writes_sort_key

from ..api import Keeper
from ..events import Durability
from ..recovery.subsystems.checkpoints import Checkpoints, Entry, History, fold_history
from ..session.live import Session
from .live import LiveThreads
from .payloads import Payloads, Serializer, is_empty

log = logging.getLogger("sessionkeeper.integrations.langgraph")
_CACHED_THREADS = 8  # threads whose folded log is kept while it does not change
LogKey = tuple[str, int]


class GraphLog:
    """The read side of a SessionKeeperSaver."""

    def __init__(self, keeper: Keeper, live: LiveThreads, payloads: Payloads, *,
                 serde: Serializer, durability: Durability) -> None:
        self.keeper, self.live, self.payloads = keeper, live, payloads
        self.serde, self.durability = serde, durability
        self._histories: OrderedDict[str, tuple[LogKey, Any]] = OrderedDict()
        self._states: OrderedDict[str, tuple[LogKey, Any]] = OrderedDict()
        self._guard = threading.Lock()

    def newest(self, sk: str, ns: str) -> Entry | None:
        """The newest checkpoint of a namespace: the live state, else the log's latest snapshot
        and tail (folded once per state of the log)."""
        with self.live.lock(sk):
            session = self.live.session(sk)
            if session is not None:
                entry = session.state.get(Checkpoints).newest(ns)
                return {**entry, "writes": list(entry["writes"])} if entry else None
            key = self._log_key(sk, None)
            if key is None:
                return None
            cached = self._cached(self._states, sk, key)
            if cached is None:
                cached = self.keeper.replay(sk).state.get(Checkpoints).latest
                self._cache(self._states, sk, key, cached)
        return cached.get(ns)

    def history(self, sk: str) -> History:
        """Every checkpoint of a thread, folded from its whole log (once per state of the log)."""
        with self.live.lock(sk):
            session = self.live.session(sk)
            if session is not None and self.durability is Durability.NONE:
                session.flush()
            key = self._log_key(sk, session)
            if key is None:
                return History()
            cached = self._cached(self._histories, sk, key)
            if cached is not None:
                return cached
            rollouts = self.keeper.store.read_thread(sk, full=True)
        damaged = [d for r in rollouts for d in r.damage]
        if damaged:
            log.warning("thread %s: %d damaged line(s) skipped while reading checkpoints",
                        sk, len(damaged))
        history = fold_history([record for rollout in rollouts for record in rollout.records])
        self._cache(self._histories, sk, key, history)
        return history

    def _log_key(self, sk: str, session: Session | None) -> LogKey | None:
        """(newest session, its size): what a folded log is valid for; None for no thread."""
        row = self.keeper.store.thread_row(sk)
        if row is None or row.latest_session is None:
            return None
        if session is not None and session.session_id == row.latest_session:
            return row.latest_session, session.writer.recorder.size
        return row.latest_session, os.stat(self.keeper.store.session_path(row.latest_session)).st_size

    def _cached(self, cache: OrderedDict[str, tuple[LogKey, Any]], sk: str,
                key: LogKey) -> Any:
        with self._guard:
            found = cache.get(sk)
            if found is None or found[0] != key:
                return None
            cache.move_to_end(sk)
            return found[1]

    def _cache(self, cache: OrderedDict[str, tuple[LogKey, Any]], sk: str,
               key: LogKey, value: Any) -> None:
        with self._guard:
            cache[sk] = (key, value)
            cache.move_to_end(sk)
            while len(cache) > _CACHED_THREADS:
                cache.popitem(last=False)

    def tuple_of(self, thread: str, ns: str, entry: Entry) -> CheckpointTuple:
        """A folded checkpoint as LangGraph's CheckpointTuple (values and writes decoded)."""
        kind, hexed = entry["checkpoint"]
        checkpoint = self.serde.loads_typed((kind, bytes.fromhex(hexed)))
        checkpoint["channel_values"] = {ch: self.payloads.decode(p)
                                        for ch, _, p in entry["channels"] if not is_empty(p)}
        writes = sorted(entry["writes"], key=lambda w: writes_sort_key(w[4], w[0], w[1]))
        config: RunnableConfig = {"configurable": {"thread_id": thread, "checkpoint_ns": ns,
                                                   "checkpoint_id": entry["id"]}}
        parent: RunnableConfig | None = None
        if entry.get("parent"):
            parent = {"configurable": {"thread_id": thread, "checkpoint_ns": ns,
                                       "checkpoint_id": entry["parent"]}}
        return CheckpointTuple(config=config, checkpoint=checkpoint,
                               metadata=copy.deepcopy(entry["metadata"]), parent_config=parent,
                               pending_writes=[(w[0], w[2], self.payloads.decode(w[3]))
                                               for w in writes])
