"""LangGraph threads as records, whole: restating, removing and finding them; writes under way.

Pure over a folded `History` except `graph_threads` (the index) and `UnderWay` (a counter):
- `restated_records` writes every checkpoint again with all its channel values (copy_thread), so
  the records resolve on their own wherever they land;
- `removal_records` removes checkpoints and restates each namespace's newest survivor when the
  newest itself goes, so the `checkpoints` subsystem folds to what remains;
- `UnderWay` counts the put_writes calls running per thread, so a put can wait for them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..events import Record
from ..recovery.subsystems.checkpoints import Entry, History
from ..store.index import ListQuery
from ..store.store import Store


def graph_threads(store: Store, agent: str) -> Iterator[str]:
    """Every thread of one agent in the store (archived too), newest first, page by page."""
    cursor: tuple[str, str] | None = None
    while True:
        rows = store.list_threads(ListQuery(agent=agent, include_archived=True, limit=500,
                                            cursor=cursor))
        yield from (row.thread_id for row in rows)
        if len(rows) < 500:
            return
        cursor = (rows[-1].last_activity or "", rows[-1].thread_id)


def _restated(entry: Entry, *, thread: str, ns: str) -> list[Record]:
    """A checkpoint entry as records that resolve without any earlier one: itself, its writes."""
    out: list[Record] = [{
        "type": "checkpoint", "thread": thread, "ns": ns, "checkpoint_id": entry["id"],
        "parent_id": entry.get("parent"), "checkpoint": entry["checkpoint"],
        "metadata": entry["metadata"], "versions": [[c, v] for c, v, _ in entry["channels"]],
        "values": [[c, v, p] for c, v, p in entry["channels"] if p != ["missing"]],
    }]
    by_task: dict[tuple[str, str], list[list[Any]]] = {}
    for task, idx, channel, payload, path in entry["writes"]:
        by_task.setdefault((task, path), []).append([idx, channel, payload])
    out += [{"type": "checkpoint_writes", "thread": thread, "ns": ns, "checkpoint_id": entry["id"],
             "task_id": task, "task_path": path, "writes": rows}
            for (task, path), rows in by_task.items()]
    return out


def restated_records(history: History, *, thread: str) -> list[Record]:
    """Every checkpoint of a history with its writes, namespace by namespace, in order."""
    return [record for ns, entries in history.namespaces.items() for entry in entries.values()
            for record in _restated(entry, thread=thread, ns=ns)]


def removal_records(history: History, *, thread: str, doomed: Callable[[Entry], bool],
                    reason: str) -> list[Record]:
    """Records removing the doomed checkpoints (nothing when none is); newest survivors restated."""
    removed = [[ns, e["id"]] for ns, entries in history.namespaces.items()
               for e in entries.values() if doomed(e)]
    if not removed:
        return []
    out: list[Record] = [{"type": "checkpoints_removed", "thread": thread, "removed": removed,
                          "reason": reason}]
    for ns, newest in history.latest.items():
        if not doomed(newest):
            continue
        survivors = [e for e in history.namespaces[ns].values() if not doomed(e)]
        if survivors:
            out += _restated(survivors[-1], thread=thread, ns=ns)
    return out


class UnderWay:
    """How many put_writes calls are running per thread; `wait` returns once none is."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._changed = threading.Condition()

    def enter(self, thread_id: str) -> None:
        """Count one call on `thread_id` as under way (until `leave`)."""
        with self._changed:
            self._counts[thread_id] = self._counts.get(thread_id, 0) + 1

    def leave(self, thread_id: str) -> None:
        """The call counted by `enter` is done."""
        with self._changed:
            self._counts[thread_id] -= 1
            if not self._counts[thread_id]:
                del self._counts[thread_id]
                self._changed.notify_all()

    def wait(self, thread_id: str) -> None:
        """Block until no call on `thread_id` is under way."""
        if thread_id not in self._counts:  # the common case: nothing to wait for, no lock taken
            return
        with self._changed:
            self._changed.wait_for(lambda: thread_id not in self._counts)
