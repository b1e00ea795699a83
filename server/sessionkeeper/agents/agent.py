"""The one interface every agent format implements: where its files are, how a line maps, how it resumes.

An agent module (codex.py, claude.py, ...) says where the agent keeps its logs (`default_roots`,
`entries`), how to fold one of its JSON lines into our records (`translator`) and how the agent
resumes a session (`resume_command`); reading — incremental, streaming, tolerant — is shared
(`reading.py`). Invariant: nothing here writes under an agent's root.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .base import MAX_LINE, AgentFile, AgentLogUnreadable, Changes, Entry, Stamp
from .discovery import changes

if TYPE_CHECKING:
    from ..store.reader import Rollout
    from .reads import Checkpoint, Read
    from .translate import Translator


class Agent(ABC):
    """One agent format: where its files are, how a line maps to our records, how it resumes."""

    name: ClassVar[str]
    records_git: ClassVar[bool] = True
    """False for an agent whose log names no branch or commit: its baseline is then the
    workspace as Session Keeper first imported the session (the index's identity)."""

    @abstractmethod
    def default_roots(self, env: Mapping[str, str] | None = None) -> list[Path]:
        """The agent's own roots from its environment variables and defaults."""

    @abstractmethod
    def entries(self, root: Path) -> Iterator[Entry]:
        """The agent's files under one root as cheap tuples, in no order; lists, never stats or opens."""

    def stat_entries(self, root: Path) -> Iterator[tuple[Entry, os.stat_result | None]]:
        """entries() with each file's stat (None when it vanished); agents may do this faster."""
        for entry in self.entries(root):
            try:
                yield entry, os.stat(entry[0])
            except OSError:
                yield entry, None

    def discover(self, roots: Sequence[Path] | None = None) -> Iterator[AgentFile]:
        """Yield the agent's files under `roots` (default_roots() when None), sorted by path."""
        for root in self.default_roots() if roots is None else roots:
            for entry in sorted(self.entries(root)):
                yield self.file_of(root, entry)

    def file_of(self, root: Path, entry: Entry) -> AgentFile:
        """The AgentFile of one entry."""
        path, kind, archived, parent, companions = entry
        return AgentFile(self.name, kind, Path(path), root, archived=archived, parent=parent,
                         companions=tuple(Path(c) for c in companions))

    @abstractmethod
    def translator(self, file: AgentFile, state: dict[str, Any] | None) -> Translator:
        """A translator for `file`, fresh (state None) or continuing from a checkpoint's state."""

    @abstractmethod
    def resume_command(self, thread_id: str) -> list[str]:
        """The agent's own command that resumes the thread (run in the thread's cwd)."""

    def fork_command(self, thread_id: str) -> list[str] | None:
        """The agent's own command that forks the thread into a new one (None: it cannot)."""
        return None

    def command_for(self, kind: str, thread_id: str, file: AgentFile) -> list[str] | None:
        """The agent's command to "continue" or "fork" the thread whose main file is `file`."""
        if kind == "continue":
            return self.resume_command_of(thread_id, str(file.path))
        return self.fork_command(thread_id)

    def thread_id_of(self, raw: str) -> str | None:
        """Our thread id of an id of the agent's own that is not ours (None: `raw` is not one)."""
        return None

    def check_notes(self, meta: Mapping[str, Any], *, now: float | None = None) -> list[str]:
        """Lines the agent adds to a check report of a thread whose meta is `meta` (`now`: epoch s)."""
        return []

    def resume_command_of(self, thread_id: str, path: str) -> list[str]:
        """resume_command() for the thread read from `path` (an agent whose command needs more
        than the thread id, such as OpenClaw's agent and session ids, takes them from there)."""
        return self.resume_command(thread_id)

    def read(self, file: AgentFile, checkpoint: Checkpoint | None = None, *,
             max_line: int = MAX_LINE) -> Read:
        """Read `file`: only the appended bytes when `checkpoint` still matches, else all of it."""
        from .reading import read_file

        return read_file(self, file, checkpoint, max_line=max_line)

    def read_many(self, items: Sequence[tuple[AgentFile, Checkpoint | None]], *,
                  max_line: int = MAX_LINE) -> Iterator[Read | Exception]:
        """read() of each (file, checkpoint) in order, or the exception it raised, one at a time
        as the caller goes on (an agent whose files share a database may read them together)."""
        for file, checkpoint in items:
            try:
                yield self.read(file, checkpoint, max_line=max_line)
            except Exception as exc:  # noqa: BLE001 - handed to the caller, who decides
                yield exc

    def load(self, file: AgentFile, *, max_line: int = MAX_LINE) -> Rollout:
        """Read all of `file` as a Rollout, ready for recovery.replay."""
        return self.read(file, max_line=max_line).rollout()

    def changes(self, roots: Sequence[Path] | None = None, *,
                checkpoints: Mapping[str, Stamp]) -> Changes:
        """Which files to read again: every listed file is stat'ed against its checkpoint (by path).

        The cheap stat-based skip an index needs on every listing: a file whose size, mtime and
        inode match its checkpoint (and that has no companion files) is neither opened nor turned
        into objects. The caller then reads `changed` one at a time (and may report progress).
        """
        return changes(self, self.default_roots() if roots is None else roots, checkpoints)

    def scan(self, roots: Sequence[Path] | None = None, *,
             checkpoints: Mapping[str, Checkpoint] | None = None,
             max_line: int = MAX_LINE) -> Iterator[tuple[AgentFile, Read | AgentLogUnreadable]]:
        """Discover and read every file (incrementally where `checkpoints[str(path)]` is given).

        A file that vanished or cannot be opened yields its AgentLogUnreadable in place of a Read,
        and the others are read as usual.
        """
        known = checkpoints or {}
        for file in self.discover(roots):
            try:
                yield file, self.read(file, known.get(str(file.path)), max_line=max_line)
            except AgentLogUnreadable as exc:
                yield file, exc
