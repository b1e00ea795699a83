"""The values of discovery: an agent's files, what a stat of them says, and the ids derived for them.

What a read of a file yields (summary, checkpoint, damage, the Read) is `reads.py`, imported when
a file is read. The interface every agent implements is `agent.Agent`.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol

from ..errors import AgentLogUnreadable as AgentLogUnreadable  # the agents package re-exports it

_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
AGENT_NAMESPACE = uuid.UUID("5f0c3f7e-2b8e-4d2a-9a51-6c1d3e7b9a40")
"""uuid5 namespace of the session ids Session Keeper derives for agent files."""
MAX_LINE = 16 << 20
"""Longest line parsed (16 MiB); a longer one is reported as damage, never read into memory."""


@dataclass(frozen=True)
class AgentFile:
    """One file of an agent, as discovery found it."""

    agent: str
    kind: str  # "session" | "subagent" (a sub-agent transcript) | "todos" (Claude's legacy todos/)
    path: Path
    root: Path  # the agent root it was found under ($CODEX_HOME, $CLAUDE_CONFIG_DIR, ...)
    archived: bool = False
    parent: str | None = None  # subagent / todos: the id of the session it belongs to
    companions: tuple[Path, ...] = ()  # files read with this one (legacy todos, a subagent's .meta.json)

    @property
    def compressed(self) -> bool:
        """True for a zstd-compressed rollout (`.jsonl.zst`)."""
        return self.path.name.endswith(".zst")


class Stamp(Protocol):
    """What `changes()` compares a file's stat with: a Checkpoint, or the index's FileCheckpoint."""

    @property
    def size(self) -> int: ...
    @property
    def mtime_ns(self) -> int: ...
    @property
    def inode(self) -> int: ...
    @property
    def companions(self) -> tuple[tuple[str, int, int], ...]: ...


Entry = tuple[str, str, bool, "str | None", tuple[str, ...]]
"""One file as discovery lists it: (path, kind, archived, parent, companion paths)."""


class Changes(NamedTuple):  # not a dataclass: ~5x cheaper to create at import (issue 13)
    """What a stat of every listed file says against the checkpoints (nothing was read yet)."""

    changed: list[AgentFile]  # new files and files whose stat differs, in path order: read these
    unchanged: list[str]  # paths whose stat matched their checkpoint (not opened)
    gone: list[str]  # checkpointed paths under the roots that no longer exist


def roots_from_env(env_var: str, defaults: Sequence[str], env: Mapping[str, str] | None = None) -> list[Path]:
    """The roots named by `env_var` (a comma list), else the defaults; `~` expanded, order kept."""
    env = os.environ if env is None else env
    raw = env.get(env_var, "")
    names = [p.strip() for p in raw.split(",") if p.strip()] if raw.strip() else list(defaults)
    out: list[Path] = []
    for name in names:
        path = Path(os.path.expanduser(name))
        if path not in out:
            out.append(path)
    return out


def derived_session_id(agent: str, thread_id: str, name: str) -> str:
    """The session id of one agent file: a uuid5 of agent, thread and file name (stable, lowercase)."""
    stem = name[:-4] if name.endswith(".zst") else name
    return str(uuid.uuid5(AGENT_NAMESPACE, f"{agent}:{thread_id}:{stem}"))


def canonical_uuid(raw: object) -> str | None:
    """The lowercase canonical form of a UUID string, or None when it is not one."""
    if not isinstance(raw, str) or len(raw) != 36:
        return None
    if _CANONICAL.fullmatch(raw):  # the common case, without building a UUID
        return raw
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        return None
