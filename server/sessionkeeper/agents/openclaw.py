"""OpenClaw sessions: `$OPENCLAW_STATE_DIR/agents/<agentId>/agent/openclaw-agent.sqlite` windows,
and legacy `agents/<agentId>/sessions/<sessionId>.jsonl` transcripts.

OpenClaw 2026.9 keeps an agent's sessions in its per-agent SQLite store (`openclaw_store.py`);
each session window (one session id under a session key such as `agent:main:main`) is one of our
agent files, path `<db>#<sessionId>`, and one thread whose scope is OpenClaw's
`{agentId}:{sessionId}`. Older installs (and archives) keep JSONL transcripts of the same events,
read line by line like the other agents' logs. Listing a store is one aggregate query on a
read-only snapshot; a window is read from its checkpoint's seq while its rewrite generation
stays the same. Resuming is OpenClaw's own `openclaw agent --session-id <id>` (interactively:
`openclaw tui --session <key>`). The mapping is in MAPPING.md beside this file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent import Agent
from .base import MAX_LINE, AgentFile, AgentLogUnreadable, Entry, roots_from_env
from .registry import register

if TYPE_CHECKING:
    from .reads import Checkpoint, Read
    from .translate import Translator

STORE = "openclaw-agent.sqlite"


class OpenClawAgent(Agent):
    """OpenClaw: session windows of its per-agent SQLite stores and legacy JSONL transcripts."""

    name = "openclaw"
    records_git = False

    def default_roots(self, env: Mapping[str, str] | None = None) -> list[Path]:
        """$OPENCLAW_STATE_DIR (a comma list allowed), else ~/.openclaw."""
        return roots_from_env("OPENCLAW_STATE_DIR", ["~/.openclaw"], env)

    def entries(self, root: Path) -> Iterator[Entry]:
        """Every window of each agent's store, and each legacy transcript (opens the stores)."""
        for entry, _ in self.stat_entries(root):
            yield entry

    def stat_entries(self, root: Path) -> Iterator[tuple[Entry, Any]]:
        """Entries with their stamps: a store's windows from one query; a store that cannot be
        read lists nothing (reading it is where its error is reported)."""
        for agent_dir in _dirs(os.path.join(root, "agents")):
            db = os.path.join(agent_dir, "agent", STORE)
            if os.path.isfile(db):
                yield from _windows(db)
            sessions = os.path.join(agent_dir, "sessions")
            for name in _files(sessions):
                if name.endswith(".jsonl"):
                    path = os.path.join(sessions, name)
                    try:
                        st: Any = os.stat(path)
                    except OSError:
                        st = None
                    yield (path, "session", True, None, ()), st

    def translator(self, file: AgentFile, state: dict[str, Any] | None) -> Translator:
        """An OpenClaw translator for `file`."""
        from .openclaw_translator import OpenClawTranslator

        return OpenClawTranslator(file, state)

    def read(self, file: AgentFile, checkpoint: Checkpoint | None = None, *,
             max_line: int = MAX_LINE) -> Read:
        """A store window from its checkpoint's seq; a JSONL transcript as the other agents' logs."""
        if "#" not in file.path.name:
            return super().read(file, checkpoint, max_line=max_line)
        from .openclaw_reading import read_window

        return read_window(self, file, checkpoint)

    def resume_command(self, thread_id: str) -> list[str]:
        """`openclaw agent --local --session-id <id> --message-file /dev/stdin`: the next prompt is read
        from stdin (OpenClaw resumes a session by id only for one turn; its TUI takes a key)."""
        return ["openclaw", "agent", "--local", "--session-id", thread_id, "--message-file", "/dev/stdin"]

    def resume_command_of(self, thread_id: str, path: str) -> list[str]:
        """The same with OpenClaw's own agent and session ids, taken from the store's path."""
        from .openclaw_translator import agent_id_of, session_id_of

        session = session_id_of(path) or thread_id
        return ["openclaw", "agent", "--local", "--agent", agent_id_of(path) or "main",
                "--session-id", session, "--message-file", "/dev/stdin"]


def _windows(db: str) -> Iterator[tuple[Entry, Any]]:
    from . import openclaw_store as store

    try:
        before = store.stats(db)
        with store.snapshot(db) as opened:
            found = store.listing(opened)
    except AgentLogUnreadable:
        yield (f"{db}#", "session", False, None, ()), None  # read (and reported) as one file
        return
    changed = not store.unchanged_since(db, before)
    for session_id, stamp in found:
        if changed:
            stamp = stamp._replace(st_mtime_ns=-1)
        yield (store.window_path(db, session_id), "session", False, None, ()), stamp


def _dirs(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return sorted(e.path for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def _files(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return sorted(e.name for e in it if e.is_file(follow_symlinks=False))
    except OSError:
        return []


def _register() -> None:
    register(OpenClawAgent())


_register()
