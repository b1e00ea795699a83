"""Fixtures of the language-server tests: real git workspaces, tmp stores, server subprocesses."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from ..conftest import git, init_repo
from ._client import Client, start_client, stop_client


def sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_workspace(root: Path) -> Path:
    """Create a real git repository at `root` on branch fix/payment with one commit."""
    init_repo(root, {"payment.py": "def charge(amount):\n    return amount\n", "README.md": "demo\n"})
    git(root, "checkout", "-q", "-b", "fix/payment")
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A real git repository on branch fix/payment with one commit (made with the git CLI)."""
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """An empty store directory ($SESSIONKEEPER_HOME of the servers)."""
    return tmp_path / "store"


@pytest.fixture
async def spawn(tmp_path: Path, store: Path) -> AsyncIterator[Callable[..., Any]]:
    """Start server subprocesses on the test's store; all are shut down at teardown."""
    clients: list[Client] = []
    home = tmp_path / "home"
    home.mkdir()

    async def start(*, workspace: Path | None, **kw: Any) -> Client:
        client = await start_client(store, home, workspace=workspace, **kw)
        clients.append(client)
        return client

    yield start
    for client in reversed(clients):
        await stop_client(client)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    """One server subprocess for a whole test module, on its own store and workspace.

    Yields (client, workspace). Modules using it set `pytestmark = asyncio(loop_scope="module")`.
    """
    base = tmp_path_factory.mktemp("lsp-module")
    (base / "home").mkdir()
    workspace = make_workspace(base / "ws")
    client = await start_client(base / "store", base / "home", workspace=workspace)
    yield client, workspace
    await stop_client(client)
