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
from sessionkeeper.agents.base import AgentFile
from sessionkeeper.agents.reads import Read
from sessionkeeper.recovery.baseline import current_workspace
from sessionkeeper.recovery.comparison import verdict_of
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


def claude_home(repo: Path, home: Path, *, branch: str | None = None,
                session: str | None = None) -> Path:
    """A CLAUDE_CONFIG_DIR whose one transcript (the generator's session) ran in the real `repo`."""
    gen = generator()
    transcript = gen.Transcript(cwd=str(repo), branch=branch or _branch(repo),
                                session=session or gen.CLAUDE_SESSION)
    path = home / "projects" / ("-" + str(repo).strip("/").replace("/", "-")) / \
        f"{transcript.session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gen.dump(gen.claude_lines(transcript)))
    return home


def codex_home(repo: Path, home: Path, *, thread: str | None = None) -> Path:
    """A CODEX_HOME whose one rollout (the generator's thread) was created in the real `repo`."""
    import subprocess

    gen = generator()
    lines = gen.codex_lines(str(repo))
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()
    lines[0]["payload"]["git"] = {"commit_hash": head, "branch": _branch(repo)}
    name = gen.CODEX_NAME
    if thread is not None:
        for line in lines:
            payload = line["payload"]
            for key in ("id", "session_id", "thread_id"):
                if payload.get(key) == gen.CODEX_THREAD:
                    payload[key] = thread
        name = name.replace(gen.CODEX_THREAD, thread)
    path = home / "sessions/2026/11/28" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gen.dump(lines))
    return home


def _branch(repo: Path) -> str:
    import subprocess

    return subprocess.run(["git", "branch", "--show-current"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout.strip()


def assert_valid_records(agent: str, scenario: str) -> None:
    """Every record read from the scenario's files validates as an event and seq runs 1..n."""
    from sessionkeeper import agents
    from sessionkeeper.session.validate import validate_event

    for found in files(agent, root(agent, scenario)):
        result = agents.get(agent).read(found)
        assert [r["seq"] for r in result.records] == list(range(1, len(result.records) + 1))
        for record in result.records:
            validate_event(record)
