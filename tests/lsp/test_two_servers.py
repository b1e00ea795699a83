"""Two servers on one store: the second gets thread_busy for the first's thread; the log stays whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from sessionkeeper.store.reader import Status, read_rollout
from sessionkeeper.store.store import Store

THREAD_BUSY = -32012


async def test_second_server_gets_thread_busy_and_the_log_is_not_corrupted(
        spawn, workspace: Path, store: Path) -> None:
    """Fixtures: `spawn` (servers on one tmp store), `workspace`, `store`."""
    first = await spawn(workspace=workspace)
    second = await spawn(workspace=workspace)
    started = await first.request("session/start", {"workspace": str(workspace), "title": "one"})
    thread = started["thread_id"]
    message = {"type": "message", "role": "user", "text": "first writer"}
    await first.request("session/record", {"session_id": started["session_id"],
                                           "events": [message] * 3})

    report = await second.request("session/checkResume", {"thread_id": thread,
                                                          "workspace": str(workspace)})
    assert report["verdict"] == "ok"  # a dry run reads; it needs no lock
    for method, params in (
            ("session/resume", {"thread_id": thread, "workspace": str(workspace),
                                "decision": "continue"}),
            ("session/resume", {"latest": True, "workspace": str(workspace)}),
            ("session/archive", {"thread_id": thread})):
        with pytest.raises(JsonRpcException) as info:
            await second.request(method, params)
        assert info.value.code == THREAD_BUSY, (method, info.value)
    assert await second.request("session/current", {}) is None

    acks = await first.request("session/record", {"session_id": started["session_id"],
                                                  "events": [message] * 2})
    assert [a["seq"] for a in acks["acks"]] == [5, 6]  # meta 0, startup 1, three messages

    await first.request("session/start", {"workspace": str(workspace)})  # closes the thread
    resumed = await second.request("session/resume", {"thread_id": thread,
                                                      "workspace": str(workspace),
                                                      "decision": "continue"})
    assert resumed["session_id"] and resumed["thread_id"] == thread

    opened = Store(store)
    rows = opened.thread_sessions(thread)
    assert len(rows) == 2
    for row in rows:
        rollout = read_rollout(opened.layout.resolve(row.path))
        assert rollout.status is Status.OK and rollout.damage == [] and rollout.tail is None
    first_log = read_rollout(opened.layout.resolve(rows[0].path))
    seqs = [first_log.meta["seq"], *(r["seq"] for r in first_log.records)]
    assert seqs == list(range(len(seqs)))
