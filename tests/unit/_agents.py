"""Helpers for the agent-format tests: fixture roots, reading one file, a tree digest, validation."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from sessionkeeper import agents
from sessionkeeper.agents.base import AgentFile, Read
from sessionkeeper.recovery.baseline import current_workspace, verdict_of
from sessionkeeper.recovery.replay import Replayed, replay
from sessionkeeper.recovery.subsystems.base import Difference
from sessionkeeper.recovery.subsystems.context import Context
from sessionkeeper.recovery.subsystems.file_history import FileHistory
from sessionkeeper.recovery.subsystems.operations import Operations
from sessionkeeper.recovery.subsystems.worktree import Worktree
from tests.conftest import FIXTURES

AGENT_FIXTURES = FIXTURES / "agents"


def generator() -> ModuleType:
    """The fixture generator, imported from its path (it builds the lines the fixtures hold)."""
    spec = importlib.util.spec_from_file_location("agent_fixtures", AGENT_FIXTURES / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def root(agent: str, scenario: str) -> Path:
    """The agent root of one fixture scenario (read-only: copy it before changing anything)."""
    return AGENT_FIXTURES / agent / scenario


def copy_root(agent: str, scenario: str, dest: Path) -> Path:
    """A writable copy of a fixture's agent root."""
    return Path(shutil.copytree(root(agent, scenario), dest / f"{agent}-{scenario}"))


def files(agent: str, where: Path) -> list[AgentFile]:
    """Every file the agent discovers under one root."""
    return list(agents.get(agent).discover([where]))


def only_session(agent: str, where: Path) -> AgentFile:
    """The one session file under a root."""
    sessions = [f for f in files(agent, where) if f.kind == "session"]
    assert len(sessions) == 1, sessions
    return sessions[0]


def read(agent: str, scenario: str) -> Read:
    """A full read of a fixture's session file."""
    return agents.get(agent).read(only_session(agent, root(agent, scenario)))


def replayed(agent: str, scenario: str) -> Replayed:
    """A fixture's session translated and folded by recovery.replay."""
    return replay([read(agent, scenario).rollout()])


def summaries(result: Replayed) -> dict[str, Any]:
    """Every subsystem's summary of a replayed thread."""
    return result.state.summaries()


def validate(result: Replayed, workspace: Path) -> tuple[list[Difference], str]:
    """Validate a replayed thread against a real workspace: (differences, verdict)."""
    ws = current_workspace(str(workspace))
    differences, _ = result.state.validate(ws)
    return differences, verdict_of(differences, damaged=bool(result.damaged))


def tree_digest(top: Path) -> str:
    """sha256 over every entry under `top`: path, type, mode, size, mtime_ns and file bytes."""
    digest = hashlib.sha256()
    for folder, dirs, names in os.walk(top):
        dirs.sort()
        for name in sorted(dirs + names):
            path = Path(folder, name)
            st = path.lstat()
            digest.update(f"{path.relative_to(top)}|{st.st_mode}|{st.st_size}|{st.st_mtime_ns}\n".encode())
            if path.is_file() and not path.is_symlink():
                digest.update(path.read_bytes())
    return digest.hexdigest()


def meta_of(result: Read) -> dict[str, Any]:
    """The session_meta of a read that found a thread."""
    found = result.meta
    assert found is not None
    return found


def ledger(thread: Replayed) -> Operations:
    """The operations subsystem of a replayed thread."""
    return cast(Operations, thread.state["operations"])


def context(thread: Replayed) -> Context:
    """The context subsystem of a replayed thread."""
    return cast(Context, thread.state["context"])


def worktree(thread: Replayed) -> Worktree:
    """The worktree subsystem of a replayed thread."""
    return cast(Worktree, thread.state["worktree"])


def history(thread: Replayed) -> FileHistory:
    """The file-history subsystem of a replayed thread."""
    return cast(FileHistory, thread.state["file_history"])
