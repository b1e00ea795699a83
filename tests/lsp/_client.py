"""A pytest-lsp client for the real server subprocess: raw JSON params, notes, timeouts."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from sessionkeeper.lsp.server import raw_json_converter

SERVER_DIR = Path(__file__).resolve().parents[2] / "server"
TIMEOUT = 20.0  # seconds for any single wait


def server_env(store: Path, home: Path) -> dict[str, str]:
    """Environment of a server subprocess: tmp store and home, git with no user config."""
    pythonpath = os.pathsep.join(p for p in (str(SERVER_DIR), os.environ.get("PYTHONPATH")) if p)
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "PYTHONPATH": pythonpath, "SESSIONKEEPER_HOME": str(store),
            "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
            "SESSIONKEEPER_LOG": "INFO", "PYTHONDONTWRITEBYTECODE": "1",
            "SESSIONKEEPER_RESIDENT": os.environ.get("SESSIONKEEPER_RESIDENT", "0")}


class Client:
    """One server subprocess and the client talking to it."""

    def __init__(self, lsp: LanguageClient) -> None:
        self.lsp = lsp
        self.statuses: list[Any] = []
        self.asked: list[types.ShowMessageRequestParams] = []
        self.answer: str | None = None  # title of the action to pick on showMessageRequest
        self.stopped = False
        self._changed = asyncio.Event()

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and await its result (with a timeout)."""
        return await asyncio.wait_for(
            self.lsp.protocol.send_request_async(method, params if params is not None else {}),
            TIMEOUT)

    async def wait_status(self, predicate: Any, *, timeout: float = TIMEOUT) -> Any:
        """Wait for a session/didChange whose Status satisfies `predicate`; return it."""
        async def poll() -> Any:
            while True:
                for status in reversed(self.statuses):
                    if predicate(status):
                        return status
                self._changed.clear()
                await self._changed.wait()
        return await asyncio.wait_for(poll(), timeout)

    def _on_status(self, params: Any) -> None:
        self.statuses.append(params)
        self._changed.set()

    def _on_ask(self, params: types.ShowMessageRequestParams) -> Any:
        self.asked.append(params)
        for action in params.actions or []:
            if action.title == self.answer:
                return action
        return None


async def start_client(store: Path, home: Path, *, workspace: Path | None,
                       options: dict[str, Any] | None = None, progress: bool = True,
                       ask: bool = True, answer: str | None = None) -> Client:
    """Spawn `python -m sessionkeeper serve --stdio` (what the editor runs) and initialize it."""
    lsp = LanguageClient(converter_factory=raw_json_converter)
    register_lsp_features(lsp)
    client = Client(lsp)
    client.answer = answer

    @lsp.feature("session/didChange")
    def on_status(params: Any) -> None:
        client._on_status(params)

    @lsp.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_ask(params: types.ShowMessageRequestParams) -> Any:
        return client._on_ask(params)

    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "sessionkeeper", "serve", "--stdio"],
        server_env=server_env(store, home), client_factory=lambda: lsp)
    await asyncio.wait_for(config.start(), TIMEOUT)
    window = types.WindowClientCapabilities(
        work_done_progress=progress,
        show_message=types.ShowMessageRequestClientCapabilities() if ask else None)
    folders = [types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)] if workspace else None
    await asyncio.wait_for(lsp.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(window=window), workspace_folders=folders,
        root_uri=workspace.as_uri() if workspace else None,
        initialization_options=options or {})), TIMEOUT)
    return client


async def stop_client(client: Client) -> None:
    """Shut the server down politely, then stop the client (each step bounded; idempotent)."""
    if client.stopped:
        return
    client.stopped = True
    try:
        await asyncio.wait_for(client.lsp.shutdown_session(), TIMEOUT)
    finally:
        await asyncio.wait_for(client.lsp.stop(), TIMEOUT)
