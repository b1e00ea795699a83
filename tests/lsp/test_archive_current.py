"""Archiving closes the current thread here; unarchiving a thread that is not archived does not;
what Unarchive offers (`archived_only`) is the archived threads alone."""

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


async def test_a_listing_of_archived_threads_only_is_what_unarchive_offers(spawn,
                                                                           workspace: Path) -> None:
    """Fixtures: `spawn`, `workspace`; two threads started, the first archived."""
    client = await spawn(workspace=workspace)
    first = await client.request("session/start", {"workspace": str(workspace)})
    second = await client.request("session/start", {"workspace": str(workspace)})
    await client.request("session/archive", {"thread_id": first["thread_id"]})

    async def listed(**params: object) -> list[str]:
        page = await client.request("session/list", params)
        return [t["thread_id"] for t in page["threads"]]

    assert await listed() == [second["thread_id"]]
    assert sorted(await listed(all=True)) == sorted([first["thread_id"], second["thread_id"]])
    assert await listed(archived_only=True) == [first["thread_id"]]
    assert await listed(archived_only=True, all=True) == [first["thread_id"]]
