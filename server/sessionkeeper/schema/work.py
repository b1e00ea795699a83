"""The records of what the agent did and how far it verified.

Tool side effects (operations, keyed by `operation_id`), file versions and who wrote them, the
workspace baseline refreshed and HEAD moved mid-session, the todo list, and verifier checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..events import Author, Change, Content, GitBaseline
from .thread import Event
from .values import TodoItem


@dataclass(frozen=True, kw_only=True)
class Operation(Event):
    """A tool side effect, keyed by `operation_id`: started, then committed or failed."""

    type: Literal["operation"] = "operation"
    operation_id: str
    """The idempotency key of the side effect ([A-Za-z0-9_-]{1,64})."""
    tool: str
    """The tool that has the effect."""
    status: Literal["started", "committed", "failed"]
    """started before the effect; committed or failed after it."""
    args_digest: str | None = None
    """sha256 of the canonical JSON of the arguments (computed from `args` when absent)."""
    args: dict[str, Any] | None = None
    """The arguments (redacted before they reach disk)."""
    result_persisted: bool = False
    """True when `result` holds the tool's result."""
    result: Any = None
    """The tool's result, to reuse instead of running it again."""


@dataclass(frozen=True, kw_only=True)
class FileChange(Event):
    """A file version written or seen, with who wrote it; without after_hash: read the file now.

    Read now means: the content becomes a blob (fsynced before the record is acknowledged) unless
    it is binary, over the size limit, a secrets file or outside the workspace (hash only, and
    `content` says why). A session's first change of a file also records what it held before:
    its content when the session saw it (`change: seen`), else at the baseline commit.
    """

    type: Literal["file_change"] = "file_change"
    path: str
    """Workspace-relative path (absolute paths inside the workspace are made relative)."""
    before_hash: str | None = None
    """sha256 of the content before the change."""
    after_hash: str | None = None
    """sha256 of the content after the change (computed at record time when absent)."""
    deleted: bool = False
    """The change deleted the file."""
    author: Author = "agent"
    """Who changed it (`rewind` only in Session Keeper's own rewind records)."""
    change: Change | None = None
    """create (absent before), modify, delete, or seen (no change: the content found before the
    session changed the file); None: not known."""
    content: Content | None = None
    """What was kept of the after content: stored (a blob), or why only the hash; None: the writer
    gave the hash and the content was never read."""
    before_content: Content | None = None
    """The same for before_hash."""
    rewind_seq: int | None = None
    """For author rewind: the seq of the rewind's `begin` record."""

    def __post_init__(self) -> None:
        if self.rewind_seq is not None and self.author != "rewind":
            raise ValueError("rewind_seq belongs to records of author rewind")


@dataclass(frozen=True, kw_only=True)
class Baseline(GitBaseline, Event):
    """The workspace baseline refreshed mid-session; without fields: capture the workspace now."""

    type: Literal["baseline"] = "baseline"


@dataclass(frozen=True, kw_only=True)
class GitMoved(Event):
    """HEAD moved while the session ran (a checkout, commit or reset seen by the editor's watcher).

    The files the move rewrote are the checkout's, not the user's edits: they get no file_change.
    The session's baseline stays as recorded, so the move shows as drift until switched back.
    """

    type: Literal["git_moved"] = "git_moved"
    from_branch: str | None = None
    """The branch checked out before (None: detached)."""
    to_branch: str | None = None
    """The branch checked out now (None: detached)."""
    from_head: str | None = None
    """The commit before."""
    to_head: str | None = None
    """The commit now."""
    files: int = 0
    """Workspace files the move rewrote."""
    touched: list[str] = field(default_factory=list)
    """Of those, the files the session had recorded (workspace-relative)."""


@dataclass(frozen=True, kw_only=True)
class Todo(Event):
    """The whole todo list as it now stands."""

    type: Literal["todo"] = "todo"
    items: list[TodoItem]
    """Every item, in order; ids are unique."""

    def __post_init__(self) -> None:
        ids = [item.id if isinstance(item, TodoItem) else item.get("id") for item in self.items]
        if len(set(ids)) != len(ids):
            raise ValueError(f"todo ids must be unique: {sorted({i for i in ids if ids.count(i) > 1})}")


@dataclass(frozen=True, kw_only=True)
class Verifier(Event):
    """A verification checkpoint: a test run (passed of total) or a review with its findings."""

    type: Literal["verifier"] = "verifier"
    kind: Literal["tests", "review"] = "tests"
    """A test run or a review."""
    passed: int | None = None
    """Tests that passed (required for a test run)."""
    total: int | None = None
    """Tests that ran (required for a test run)."""
    findings: list[str] = field(default_factory=list)
    """A review's findings."""
    checkpoint: str | None = None
    """A name for this point (e.g. a commit)."""
    command: str | None = None
    """The command that ran the tests."""

    def __post_init__(self) -> None:
        if self.kind != "tests":
            return
        if self.passed is None or self.total is None:
            raise ValueError("a test run needs both passed and total")
        if not 0 <= self.passed <= self.total:
            raise ValueError(f"passed ({self.passed}) must lie between 0 and total ({self.total})")
