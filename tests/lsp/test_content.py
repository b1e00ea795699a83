"""session/diff, session/blob and session/rewind: in-process (handlers on a real store and repo)
and through the real server subprocess with its workspace watcher."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from sessionkeeper.lsp.app import dispatch
from sessionkeeper.lsp.options import ServerOptions
from sessionkeeper.lsp.server import DID_CHANGE, DID_CHANGE_THREADS, SessionKeeperServer

from ._client import TIMEOUT, Client

ORIGINAL = b"def charge(amount):\n    return amount\n"
V1 = b"def charge(amount):\n    return round(amount, 2)\n"
V2 = b"def charge(amount, fee=0):\n    return round(amount + fee, 2)\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def notes() -> list[tuple[str, Any]]:
    """The notifications the `server` fixture sent, in order."""
    return []


@pytest.fixture
def server(store_dir: Path, repo: Path, notes: list[tuple[str, Any]]) -> Iterator[SessionKeeperServer]:
    """A server object on `store_dir` with `repo` as its workspace (no watcher), its
    notifications kept in `notes` instead of being sent."""
    ls = SessionKeeperServer(store=str(store_dir))
    ls.workspace_root = str(repo)
    ls.options = ServerOptions(watch=False)
    setattr(ls.protocol, "notify", lambda method, params=None: notes.append((method, params)))  # noqa: B010
    yield ls
    ls.close_all()


async def code_of(server: SessionKeeperServer, method: str, params: dict[str, Any]) -> int:
    """The JSON-RPC error code a request gets (fails the test if it succeeds)."""
    with pytest.raises(JsonRpcException) as info:
        await dispatch(server, method, params)
    return info.value.code


async def test_diff_blob_and_rewind_in_process(server: SessionKeeperServer, repo: Path,
                                               notes: list[tuple[str, Any]]) -> None:
    """Fixtures: `server`, `notes`, `repo` (payment.py committed as ORIGINAL); the agent writes V1,
    then V2 of payment.py and records each without hashes through session/record."""
    started = await dispatch(server, "session/start", {})
    thread, session = started["thread_id"], started["session_id"]
    seqs = []
    for data in (V1, V2):
        (repo / "payment.py").write_bytes(data)
        acks = await dispatch(server, "session/record", {"session_id": session, "events": [
            {"type": "file_change", "path": "payment.py"}]})
        seqs.append(acks["acks"][0]["seq"])

    [diff] = (await dispatch(server, "session/diff", {"thread_id": thread}))["files"]
    assert diff["before"] == {"seq": None, "hash": sha(ORIGINAL), "author": "external",
                              "available": True}
    assert diff["after"]["seq"] == seqs[1] and diff["after"]["author"] == "agent"
    assert "+def charge(amount, fee=0):" in diff["unified"] and diff["note"] is None
    ranged = await dispatch(server, "session/diff", {"thread_id": thread, "from_seq": seqs[0]})
    assert ranged["files"][0]["before"]["hash"] == sha(V1)

    blob = await dispatch(server, "session/blob", {"thread_id": thread, "hash": sha(ORIGINAL)})
    assert blob == {"hash": sha(ORIGINAL), "text": ORIGINAL.decode(), "size": len(ORIGINAL),
                    "note": None}
    assert await code_of(server, "session/blob", {"thread_id": thread, "hash": sha(b"other")}) \
        == -32011  # unknown_version: only versions the thread names are served
    assert await code_of(server, "session/blob", {"thread_id": thread, "hash": "abc"}) == -32602

    dry = await dispatch(server, "session/rewind", {"thread_id": thread, "to_seq": seqs[0],
                                                    "dry_run": True})
    assert dry == {"steps": [{"path": "payment.py", "action": "restore", "outcome": None,
                              "reason": f"restore its version of seq {seqs[0]} (agent)",
                              "before_hash": sha(V2), "after_hash": sha(V1)}],
                   "rewind_seq": None, "undo_available": False}
    assert (repo / "payment.py").read_bytes() == V2

    done = await dispatch(server, "session/rewind", {"thread_id": thread, "to_seq": seqs[0]})
    assert done["steps"][0]["outcome"] == "written" and done["undo_available"] is True
    assert (repo / "payment.py").read_bytes() == V1
    assert isinstance(done["rewind_seq"], int) and done["rewind_seq"] > seqs[1]
    assert server.session is not None and server.session.session_id == session  # same session
    undo = await dispatch(server, "session/rewind", {"thread_id": thread, "undo": True})
    assert undo["steps"][0]["outcome"] == "written" and undo["undo_available"] is False
    assert (repo / "payment.py").read_bytes() == V2
    assert {method for method, _ in notes} <= {DID_CHANGE, DID_CHANGE_THREADS}  # status and listing
    assert await code_of(server, "session/rewind", {"thread_id": thread}) == -32602
    assert await code_of(server, "session/rewind", {"thread_id": thread, "undo": True,
                                                    "to_seq": 1}) == -32602


async def test_blob_says_why_a_version_has_no_text(server: SessionKeeperServer, repo: Path) -> None:
    """Fixtures: `server`, `repo`; the agent writes a binary file (kept by hash only) and a
    Latin-1 text file (kept, but not UTF-8)."""
    started = await dispatch(server, "session/start", {})
    binary, latin = b"\x00\x01binary", "café\n".encode("latin-1")
    (repo / "data.bin").write_bytes(binary)
    (repo / "menu.txt").write_bytes(latin)
    await dispatch(server, "session/record", {"session_id": started["session_id"], "events": [
        {"type": "file_change", "path": "data.bin"}, {"type": "file_change", "path": "menu.txt"}]})
    thread = started["thread_id"]
    kept = await dispatch(server, "session/blob", {"thread_id": thread, "hash": sha(binary)})
    assert kept == {"hash": sha(binary), "text": None, "size": None,
                    "note": "blob_missing: its content was never kept (binary)"}
    other = await dispatch(server, "session/blob", {"thread_id": thread, "hash": sha(latin)})
    assert other == {"hash": sha(latin), "text": None, "size": len(latin), "note": "not UTF-8 text"}
    [diff] = [f for f in (await dispatch(server, "session/diff", {"thread_id": thread}))["files"]
              if f["path"] == "data.bin"]
    assert diff["after"]["available"] is False and diff["unified"] is None and diff["note"]


async def _wait_timeline(client: Client, thread: str, summary: str) -> list[dict[str, Any]]:
    """Poll session/show until an entry with `summary` appears; return the file_change entries."""
    async def poll() -> list[dict[str, Any]]:
        while True:
            shown = await client.request("session/show", {"thread_id": thread})
            entries = [e for e in shown["timeline"] if e["type"] == "file_change"]
            if any(e["summary"] == summary for e in entries):
                return entries
            await asyncio.sleep(0.2)
    return await asyncio.wait_for(poll(), TIMEOUT)


async def test_rewind_story_through_the_real_server_keeps_the_users_watched_edit(
        spawn: Any, workspace: Path) -> None:
    """Fixtures: `spawn` (real server subprocesses), `workspace` (payment.py and README.md
    committed); the agent edits both and creates notes.py, the user then edits README.md and
    the server's watcher records it."""
    client = await spawn(workspace=workspace)
    started = await client.request("session/start", {"workspace": str(workspace)})
    thread, session = started["thread_id"], started["session_id"]
    await asyncio.sleep(1.0)  # the watcher starts with the session

    async def agent(files: dict[str, bytes]) -> int:
        for name, data in files.items():
            (workspace / name).write_bytes(data)
        acks = await client.request("session/record", {"session_id": session, "events": [
            {"type": "file_change", "path": name} for name in files]})
        return int(acks["acks"][-1]["seq"])

    early = await agent({"payment.py": V1, "README.md": b"demo, by the agent\n"})
    await agent({"payment.py": V2, "notes.py": b"NOTES = []\n"})
    user = b"demo, by the agent\nand a line by the user\n"
    (workspace / "README.md").write_bytes(user)
    await _wait_timeline(client, thread, "README.md by user")

    files = {f["path"]: f for f in (await client.request("session/diff", {"thread_id": thread}))["files"]}
    assert files["README.md"]["after"]["author"] == "agent+user"
    assert files["README.md"]["after"]["available"] is True  # the watcher kept its content
    assert "+and a line by the user" in files["README.md"]["unified"]

    done = await client.request("session/rewind", {"thread_id": thread, "to_seq": early})
    outcomes = {s["path"]: (s["action"], s["outcome"]) for s in done["steps"]}
    assert outcomes == {"payment.py": ("restore", "written"), "notes.py": ("delete", "deleted"),
                        "README.md": ("refused", "skipped")}
    assert (workspace / "README.md").read_bytes() == user
    forced = await client.request("session/rewind", {"thread_id": thread, "to_seq": early,
                                                     "paths": ["README.md"], "force": True})
    assert forced["steps"][0]["outcome"] == "written"
    assert (workspace / "README.md").read_bytes() == b"demo, by the agent\n"
    await client.request("session/rewind", {"thread_id": thread, "undo": True})
    assert (workspace / "README.md").read_bytes() == user  # from the blob the watcher kept
    await client.request("session/rewind", {"thread_id": thread, "undo": True})
    assert (workspace / "payment.py").read_bytes() == V2
    assert (workspace / "notes.py").read_bytes() == b"NOTES = []\n"

    await asyncio.sleep(1.5)  # the rewinds' own writes are not recorded again by the watcher
    shown = await client.request("session/show", {"thread_id": thread})
    summaries = [e["summary"] for e in shown["timeline"] if e["type"] == "file_change"]
    assert summaries.count("README.md by user") == 1
    assert not [s for s in summaries if s.endswith("by external")]
    status = await client.request("session/current", {})
    assert status["session_id"] == session
