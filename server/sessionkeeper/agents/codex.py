"""OpenAI Codex CLI rollouts: `$CODEX_HOME/{sessions,archived_sessions}/**/rollout-*.jsonl[.zst]`.

Every line is `{timestamp, [ordinal], type, payload}` with type session_meta | turn_context |
response_item | event_msg | compacted | token_usage_record (newer CLIs add world_state and more:
skipped and counted). Start and every resume append to the same file, so one file is one thread
and one of our sessions. Discovery is here; the translator (`codex_translator.py`) is loaded
when a file is parsed. The field-by-field mapping is in MAPPING.md beside this file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent import Agent
from .base import AgentFile, Entry, roots_from_env
from .registry import register

if TYPE_CHECKING:
    from .translate import Translator


class CodexAgent(Agent):
    """Codex CLI: discovery under $CODEX_HOME, translation of its rollout lines."""

    name = "codex"

    def default_roots(self, env: Mapping[str, str] | None = None) -> list[Path]:
        """$CODEX_HOME (a comma list allowed), else ~/.codex."""
        return roots_from_env("CODEX_HOME", ["~/.codex"], env)

    def entries(self, root: Path) -> Iterator[Entry]:
        """Rollouts under sessions/ and archived_sessions/: one per name, the active plain file first."""
        chosen: dict[str, tuple[bool, bool, str]] = {}  # name without .zst -> (archived, compressed, path)
        for sub, archived in (("sessions", False), ("archived_sessions", True)):
            for path in _walk(os.path.join(root, sub)):
                name = os.path.basename(path)
                if not name.startswith("rollout-") or not name.endswith((".jsonl", ".jsonl.zst")):
                    continue
                compressed = name.endswith(".zst")
                key = name[:-4] if compressed else name
                best = chosen.get(key)
                if best is None or (archived, compressed) < best[:2]:
                    chosen[key] = (archived, compressed, path)
        for archived, _, path in chosen.values():
            yield path, "session", archived, None, ()

    def translator(self, file: AgentFile, state: dict[str, Any] | None) -> Translator:
        """A Codex translator for `file`."""
        from .codex_translator import CodexTranslator

        return CodexTranslator(file, state)

    def resume_command(self, thread_id: str) -> list[str]:
        """`codex resume <id>`."""
        return ["codex", "resume", thread_id]

    def fork_command(self, thread_id: str) -> list[str]:
        """`codex fork <id>`."""
        return ["codex", "fork", thread_id]


def _walk(base: str) -> Iterator[str]:
    for top, _dirs, files in os.walk(base):  # never follows symlinked directories
        for name in files:
            yield os.path.join(top, name)


def _register() -> None:
    register(CodexAgent())


_register()
