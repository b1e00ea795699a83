"""What the Hermes tests share: the recorded home (`fixtures/agents/hermes/real/`), a writable copy
of it, and a message appended to one of its sessions as Hermes appends it."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

from sessionkeeper import agents
from tests.unit._agents import AGENT_FIXTURES

REAL = AGENT_FIXTURES / "hermes" / "real"
CLI, OLD_CHAT, NEW_CHAT = "20261203_112358_0facf2", "20261202_112409_d6e4b0ab", "20261203_112415_6fd9132e"
HERMES = agents.get("hermes")


def home(tmp_path: Path, name: str = "hermes") -> Path:
    """A writable copy of the recorded Hermes home."""
    return Path(shutil.copytree(REAL, tmp_path / name))


def append_message(root: Path, native: str, content: str) -> None:
    """Add one user message as Hermes does (a messages row, the session's count bumped)."""
    db = sqlite3.connect(root / "state.db")
    db.execute("INSERT INTO messages (session_id, role, content, timestamp, active) "
               "VALUES (?, 'user', ?, ?, 1)", (native, content, time.time()))
    db.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?", (native,))
    db.commit()
    db.close()
