"""`sessionkeeper mcp` as a real process, driven by the MCP SDK's own client over stdio: the tools
it lists, each one called, bad calls answered as tool errors while the server goes on, no network,
nothing written by a read, and a rewind only when the policy allows it (fixture: a Claude Code
session recorded by the real hooks in a real git repository)."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.test_hooks_cli import _AUDITED
from tests.unit._hooks import SID, call

SK = str(Path(sys.executable).parent / "sessionkeeper")
TOOLS = {"drift_since", "in_doubt_operations", "file_history", "diff", "rewind_preview", "rewind",
         "todos", "verifier"}
pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def recorded(repo: Path, store_dir: Path) -> Path:
    """`repo` with a Claude Code session: started, an edit through a finished shell call, the
    branch switched by it, and a deploy that started and never finished."""
    import subprocess

    call("claude", "SessionStart", repo, store_dir, source="startup")
    command = "git checkout -q -b mcp-test && echo '# agent' >> payment.py"
    call("claude", "PreToolUse", repo, store_dir, tool_name="Bash", tool_input={"command": command},
         tool_use_id="toolu_edit")
    subprocess.run(["bash", "-c", command], cwd=repo, check=True,
                   env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_GLOBAL": "/dev/null"})
    call("claude", "PostToolUse", repo, store_dir, tool_name="Bash", tool_input={"command": command},
         tool_use_id="toolu_edit", tool_response={"stdout": ""})
    call("claude", "PreToolUse", repo, store_dir, tool_name="Bash",
         tool_input={"command": "make deploy"}, tool_use_id="toolu_deploy")
    gc.collect()  # the hooks' Keepers closed, as when each hook's process ends: the index's WAL
    return repo   # is checkpointed now, not by whichever process closes it last


@asynccontextmanager
async def _server(repo: Path, store: Path, tmp_path: Path, *, env: dict[str, str] | None = None,
                  argv: list[str] | None = None) -> AsyncIterator[Client]:
    """The SDK's client connected to `sessionkeeper mcp`, started as Claude Code starts it."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    params = StdioServerParameters(
        command=(argv or [SK])[0], args=[*(argv or [SK])[1:], "mcp", "--store", str(store)],
        cwd=str(repo), env={"HOME": str(home), "GIT_CONFIG_GLOBAL": "/dev/null",
                            "CLAUDE_CODE_SESSION_ID": SID, **(env or {})})
    async with Client(params, read_timeout_seconds=60) as client:
        yield client


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert data == result.structured_content
    return dict(data)


def _tree(root: Path) -> dict[str, str]:
    """{path: sha256} of every file under `root`, SQLite's -shm files aside: the wal-index every
    reader of a WAL database maps and updates (shared memory in a file, never data)."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith("-shm")}


async def test_the_sdks_client_lists_every_tool_and_each_one_answers(recorded: Path, store_dir: Path,
                                                                     tmp_path: Path) -> None:
    """`recorded`; list the tools, then call each one."""
    async with _server(recorded, store_dir, tmp_path) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == TOOLS
        assert all(len(t.description or "") > 80 for t in listed.values())  # when to call it
        assert {n for n, t in listed.items() if t.annotations and t.annotations.read_only_hint} \
            == TOOLS - {"rewind"}
        drift = _data(await client.call_tool("drift_since", {"since": "session_start"}))
        assert drift["branch"]["now"] == "mcp-test" and "toolu_edit" in drift["summary"][0]
        doubt = _data(await client.call_tool("in_doubt_operations", {}))
        assert [o["operation_id"] for o in doubt["in_doubt"]] == ["toolu_deploy"]
        history = _data(await client.call_tool("file_history", {"path": "payment.py"}))
        assert history["versions_newest_first"][0]["author"] == "agent"
        diff = _data(await client.call_tool("diff", {"path": "payment.py"}))
        assert "+# agent" in diff["diff"]
        preview = _data(await client.call_tool("rewind_preview", {"path": "payment.py"}))
        assert preview["steps"][0]["action"] == "restore" and preview["rewind_allowed"] is False
        assert _data(await client.call_tool("todos", {}))["total"] == 0
        assert _data(await client.call_tool("verifier", {}))["tests"] is None
        refused = await client.call_tool("rewind", {"path": "payment.py"})
        assert refused.is_error and "tool_not_allowed" in refused.content[0].text


async def test_bad_calls_are_tool_errors_the_model_reads_and_the_server_goes_on(
        recorded: Path, store_dir: Path, tmp_path: Path) -> None:
    """`recorded`; a seq beyond the session, a path outside the workspace, a word `since` does
    not know, an argument of the wrong type, an unknown tool; then a good call."""
    async with _server(recorded, store_dir, tmp_path) as client:
        for name, args, says in [
                ("drift_since", {"since": 99999}, "beyond the session's last record"),
                ("file_history", {"path": "/etc/passwd"}, "outside the session's workspace"),
                ("diff", {"path": "../x"}, "outside the session's workspace"),
                ("drift_since", {"since": "yesterday"}, "give a seq"),
                ("diff", {"path": "payment.py", "from_seq": "soon"}, "from_seq"),
                ("no_such_tool", {}, "no_such_tool")]:
            result = await client.call_tool(name, args)
            assert result.is_error, (name, args)
            assert says in result.content[0].text, result.content[0].text
        assert _data(await client.call_tool("todos", {}))["session"]["session_id"] == SID
    async with _server(recorded, store_dir, tmp_path,
                       env={"CLAUDE_CODE_SESSION_ID": "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"}) as other:
        unknown = await other.call_tool("drift_since", {})
        assert unknown.is_error and "unknown_thread" in unknown.content[0].text


async def test_the_server_opens_no_network_connection_and_reads_write_nothing(
        recorded: Path, store_dir: Path, tmp_path: Path) -> None:
    """`recorded`; the server under a Python audit hook recording socket, urllib and http events,
    every read tool called; the store and the workspace digested around it."""
    before = _tree(store_dir), _tree(recorded)
    audit = tmp_path / "audit.json"
    argv = [sys.executable, "-c", _AUDITED.replace('seen.append(event)',
                                                   'seen.append(event); _flush()')
            .replace("seen = []", "seen = []\ndef _flush():\n    open(OUT, 'w').write(json.dumps(seen))"
                     "\n_flush()"), str(audit)]
    async with _server(recorded, store_dir, tmp_path, argv=argv) as client:
        for name, args in [("drift_since", {}), ("in_doubt_operations", {}),
                           ("file_history", {"path": "payment.py"}), ("diff", {"path": "payment.py"}),
                           ("rewind_preview", {"to_seq": 0}), ("todos", {}), ("verifier", {})]:
            _data(await client.call_tool(name, args))
    connections = [e for e in json.loads(audit.read_text()) if e not in _LOCAL_ONLY]
    assert connections == []
    assert (_tree(store_dir), _tree(recorded)) == before


_LOCAL_ONLY = {"socket.__new__"}  # the event loop's own socketpair (AF_UNIX), never a connection


async def test_an_allowed_rewind_restores_the_agents_edit_and_undoes(recorded: Path,
                                                                    store_dir: Path,
                                                                    tmp_path: Path) -> None:
    """`recorded`; the user allows rewinds for agents (SESSIONKEEPER_MCP_REWIND=allow)."""
    edited = (recorded / "payment.py").read_text()
    async with _server(recorded, store_dir, tmp_path,
                       env={"SESSIONKEEPER_MCP_REWIND": "allow"}) as client:
        done = _data(await client.call_tool("rewind", {"path": "payment.py"}))
        assert done["steps"][0]["outcome"] == "written" and done["complete"] is True
        assert "# agent" not in (recorded / "payment.py").read_text()
        undone = _data(await client.call_tool("rewind", {"undo": True}))
        assert undone["undo_of"] == done["rewind_seq"]
    assert (recorded / "payment.py").read_text() == edited
    assert os.path.isdir(store_dir / "journals" / "claude")
