"""Startup hooks from initializationOptions run after `initialized`, in order, failures shown."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from ._client import TIMEOUT


async def _until(predicate, *, timeout: float = TIMEOUT) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.05)
    await asyncio.wait_for(poll(), timeout)


async def test_startup_hooks_run_in_the_workspace_and_a_failure_is_shown(
        spawn, workspace: Path) -> None:
    """Fixtures: `spawn`, `workspace`; one hook writes a marker file, one exits 2."""
    marker = workspace / "hook-ran.txt"
    hooks = [
        {"name": "marker", "sources": ["startup"], "order": 1, "command": [
            sys.executable, "-c",
            "import json,sys; open('hook-ran.txt','w').write(json.load(sys.stdin)['workspace'])"]},
        {"name": "broken", "sources": ["startup"], "order": 2,
         "command": [sys.executable, "-c", "import sys; sys.exit(2)"]},
    ]
    client = await spawn(workspace=workspace, options={"hooks": hooks})
    await _until(lambda: any("broken" in m.message for m in client.lsp.messages))
    assert marker.read_text() == str(workspace)
    warning = next(m for m in client.lsp.messages if "broken" in m.message)
    assert "exit 2" in warning.message


async def test_no_hooks_configured_means_no_work_at_start_up(spawn, workspace: Path,
                                                             store: Path) -> None:
    """Fixtures: `spawn`, `workspace`, `store`: the store is not even created before a request."""
    client = await spawn(workspace=workspace)
    await asyncio.sleep(0.3)
    assert not store.exists()
    assert client.lsp.messages == []
