"""Archiving closes the current thread here; unarchiving a thread that is not archived does not."""

from __future__ import annotations

from pathlib import Path


async def test_unarchive_of_the_current_thread_keeps_it_open(spawn, workspace: Path) -> None:
    """Fixtures: `spawn`, `workspace`."""
    client = await spawn(workspace=workspace)
    started = await client.request("session/start", {"workspace": str(workspace)})
    await client.request("session/unarchive", {"thread_id": started["thread_id"]})
    current = await client.request("session/current", {})
    assert current is not None and current["session_id"] == started["session_id"]
    acks = await client.request("session/record", {"session_id": started["session_id"], "events": [
        {"type": "message", "role": "user", "text": "still recording"}]})
    assert acks["acks"][0]["duplicate"] is False
    await client.request("session/archive", {"thread_id": started["thread_id"]})
    assert await client.request("session/current", {}) is None
