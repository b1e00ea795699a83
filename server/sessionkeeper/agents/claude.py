"""Claude Code transcripts: `$CLAUDE_CONFIG_DIR/projects/<project>/<session>.jsonl`, and sub-agents.

Roots: $CLAUDE_CONFIG_DIR (a comma list allowed), else ~/.claude and ~/.config/claude. A project
folder's name is a lossy encoding of a path and is never decoded: each line carries its `cwd`.
Sub-agent transcripts `<project>/<session>/subagents/agent-*.jsonl` belong to their parent's
thread (kind "subagent", never a thread of their own); the legacy `todos/<session>-agent-
<session>.json` is a companion of its session. Lines form a tree by `parentUuid`: the live branch
is the chain of the newest conversation line (`live.py`); rewound-away lines are counted, not
folded. Discovery (the listing: one scandir per folder, stat'ed relative to the open folder when
asked) is here; the translator (`claude_translator.py`) is loaded when a file is parsed. The
field-by-field mapping is in MAPPING.md beside this file.
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


class ClaudeAgent(Agent):
    """Claude Code: discovery under $CLAUDE_CONFIG_DIR, translation of its transcript lines."""

    name = "claude"

    def default_roots(self, env: Mapping[str, str] | None = None) -> list[Path]:
        """$CLAUDE_CONFIG_DIR (a comma list allowed), else ~/.claude and ~/.config/claude."""
        return roots_from_env("CLAUDE_CONFIG_DIR", ["~/.claude", "~/.config/claude"], env)

    def entries(self, root: Path) -> Iterator[Entry]:
        """Session transcripts of every project and their sub-agent transcripts; one scandir each."""
        for entry, _ in listing(root, stat=False):
            yield entry

    def stat_entries(self, root: Path) -> Iterator[tuple[Entry, os.stat_result | None]]:
        """entries() with each file's stat, taken relative to its open folder (one fstatat each)."""
        return listing(root, stat=True)

    def translator(self, file: AgentFile, state: dict[str, Any] | None) -> Translator:
        """A Claude translator for `file`."""
        from .claude_translator import ClaudeTranslator

        return ClaudeTranslator(file, state)

    def resume_command(self, thread_id: str) -> list[str]:
        """`claude --resume <id>`."""
        return ["claude", "--resume", thread_id]

    def fork_command(self, thread_id: str) -> list[str]:
        """`claude --resume <id> --fork-session`."""
        return ["claude", "--resume", thread_id, "--fork-session"]


def listing(root: Path, *, stat: bool) -> Iterator[tuple[Entry, os.stat_result | None]]:
    """Every session and sub-agent transcript under one root, with its stat when asked for."""
    todos = {name for name, _, _ in _names(os.path.join(root, "todos"))[0]}  # one listing, no stats
    for _, project, _ in _names(os.path.join(root, "projects"))[1]:
        files, sessions = _names(project, stat=stat)
        for name, path, st in files:
            if not name.endswith(".jsonl"):
                continue
            if todos:
                todo = f"{name[:-6]}-agent-{name[:-6]}.json"
                if todo in todos:
                    yield (path, "session", False, None, (os.path.join(root, "todos", todo),)), st
                    continue
            yield (path, "session", False, None, ()), st
        for session_name, session, _ in sessions:
            listed = _names(os.path.join(session, "subagents"), stat=stat)[0]
            paths = {path for _, path, _ in listed}
            for name, path, st in listed:
                if name.startswith("agent-") and name.endswith(".jsonl"):
                    info = path[:-6] + ".meta.json"
                    yield (path, "subagent", False, session_name,
                           (info,) if info in paths else ()), st


Listed = tuple[str, str, "os.stat_result | None"]  # name, path, stat (when asked for)


def _names(folder: str, *, stat: bool = False) -> tuple[list[Listed], list[Listed]]:
    """(files, directories) directly in `folder` as (name, path, stat); empty when it is missing.

    With `stat`, each file is stat'ed relative to the open folder (fstatat: no path walk).
    """
    files: list[Listed] = []
    dirs: list[Listed] = []
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:  # missing, not a directory, unreadable
        return files, dirs
    try:
        with os.scandir(fd) as it:
            for entry in it:
                name = entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        dirs.append((name, f"{folder}/{name}", None))
                        continue
                    if not entry.is_file():
                        continue
                except OSError:  # a symlink loop, a target we may not stat: no file of ours
                    continue
                try:
                    st = entry.stat() if stat else None
                except OSError:  # gone since the listing
                    st = None
                files.append((name, f"{folder}/{name}", st))
    except OSError:
        pass
    finally:
        os.close(fd)
    return files, dirs


def _register() -> None:
    register(ClaudeAgent())


_register()
