"""Workspace watching: user and external edits become file_change events; the agent's are not repeated."""

from __future__ import annotations

import asyncio
import itertools
import os
from pathlib import Path

from ..conftest import git
from ._client import TIMEOUT, Client
from .conftest import sha256

WATCH_READY_S = 1.0  # the watcher starts with the session; give inotify a moment


async def file_changes(client: Client, thread: str, count: int) -> list[dict]:
    """Poll session/show until the thread has `count` file_change entries; return them."""
    async def poll() -> list[dict]:
        while True:
            shown = await client.request("session/show", {"thread_id": thread})
            found = [e for e in shown["timeline"] if e["type"] == "file_change"]
            if len(found) >= count:
                return found
            await asyncio.sleep(0.2)
    return await asyncio.wait_for(poll(), TIMEOUT)


async def test_watched_changes_are_recorded_with_authors_and_agent_edits_are_not_repeated(
        spawn, workspace: Path) -> None:
    """Fixtures: `spawn`, `workspace` (git repo with payment.py and README.md)."""
    client = await spawn(workspace=workspace)
    started = await client.request("session/start", {"workspace": str(workspace)})
    await asyncio.sleep(WATCH_READY_S)

    agent_file = workspace / "payment.py"
    agent_file.write_text("def charge(amount):\n    return round(amount, 2)\n")
    await client.request("session/record", {"session_id": started["session_id"], "events": [
        {"type": "file_change", "path": "payment.py", "author": "agent",
         "after_hash": sha256(agent_file)}]})
    (workspace / "README.md").write_text("demo, edited by hand\n")
    (workspace / "node_modules").mkdir()
    (workspace / "node_modules" / "dep.js").write_text("ignored\n")
    (workspace / "__pycache__").mkdir()
    (workspace / "__pycache__" / "x.pyc").write_bytes(b"ignored")
    git(workspace, "add", "README.md")  # .git/ churn is ignored

    entries = await file_changes(client, started["thread_id"], 2)
    assert [e["summary"] for e in entries] == ["payment.py by agent", "README.md by user"]

    agent_file.unlink()
    entries = await file_changes(client, started["thread_id"], 3)
    assert entries[-1]["summary"] == "payment.py by external"

    (workspace / "NOTES.md").write_text("a later, unrelated edit\n")  # a barrier: when it is in,
    entries = await file_changes(client, started["thread_id"], 4)  # anything before it is too
    assert [e["summary"] for e in entries][2:] == ["payment.py by external", "NOTES.md by user"]


async def test_a_file_name_that_is_not_utf8_loses_one_batch_not_the_watch(
        spawn, workspace: Path) -> None:
    """Fixtures: `spawn`, `workspace`; a file named b"bad\\xff.txt" appears (watchfiles cannot
    name it), then README.md is edited by hand until the session records it."""
    client = await spawn(workspace=workspace)
    started = await client.request("session/start", {"workspace": str(workspace)})
    await asyncio.sleep(WATCH_READY_S)
    with open(os.path.join(os.fsencode(workspace), b"bad\xff.txt"), "wb") as f:
        f.write(b"x")

    async def edit_until_recorded() -> list[dict]:
        for n in itertools.count():
            (workspace / "README.md").write_text(f"edited by hand, {n}\n")
            shown = await client.request("session/show", {"thread_id": started["thread_id"]})
            found = [e for e in shown["timeline"] if e["type"] == "file_change"]
            if found:
                return found
            await asyncio.sleep(0.5)
        raise AssertionError("unreachable")

    entries = await asyncio.wait_for(edit_until_recorded(), TIMEOUT)
    assert entries[0]["summary"] == "README.md by user"
