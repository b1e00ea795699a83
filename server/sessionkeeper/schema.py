"""The rollout record schema: one frozen dataclass per record type — the single definition.

Imported only where records are built or validated (`validate.py` checks records from outside
against these classes and generates the JSON Schema from them); reading and listing never need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from .events import (
    DEFAULT_APPROVAL,
    DEFAULT_SANDBOX,
    DEFAULT_TOOLS,
    SCHEMA_VERSION,
    STRICT,
    ApprovalMode,
    Author,
    Change,
    Content,
    GitBaseline,
    RewindAction,
    RewindOutcome,
    SandboxPolicy,
    Source,
)

# ---- values inside records ---------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Permissions:
    """What the agent may do: restored exactly, never inferred from text."""

    __pydantic_config__ = STRICT
    approval_mode: ApprovalMode = DEFAULT_APPROVAL
    """When the agent asks the user before acting."""
    sandbox_policy: SandboxPolicy = DEFAULT_SANDBOX
    """What the agent's tools may touch."""
    tool_profile: str = DEFAULT_TOOLS
    """The named set of tools the agent may use."""


@dataclass(frozen=True, kw_only=True)
class ForkedFrom:
    """The point of the parent thread a fork starts from."""

    __pydantic_config__ = STRICT
    thread_id: str
    """The parent thread."""
    session_id: str
    """The parent's session the fork was taken from."""
    seq: int
    """The parent's last record the fork includes."""


@dataclass(frozen=True, kw_only=True)
class ClientInfo:
    """Which program wrote the session."""

    __pydantic_config__ = STRICT
    name: str
    """The program's name (e.g. sessionkeeper-python, codex, claude)."""
    version: str | None = None
    """Its version."""


@dataclass(frozen=True, kw_only=True)
class TodoItem:
    """One todo of the agent."""

    __pydantic_config__ = STRICT
    id: str
    """Stable within the list."""
    text: str
    """What is to be done."""
    status: Literal["pending", "in_progress", "done"] = "pending"
    """Where the item stands."""


@dataclass(frozen=True, kw_only=True)
class RewindInfo:
    """What a `rewind` lifecycle record holds: the plan when the rewind begins, the outcome at its end.

    A `begin` record without an `end` record after it is a rewind a crash interrupted: the next
    rewind of the thread finishes it first (re-planning it is idempotent).
    """

    __pydantic_config__ = STRICT
    stage: Literal["begin", "end"]
    """begin: written (durably) before any file is touched; end: after every file was handled."""
    to_seq: int
    """The seq whose file versions are restored."""
    undo_of: int | None = None
    """For an undo: the seq of the `begin` record of the rewind it undoes."""
    paths: list[str] | None = None
    """Only these files (workspace-relative); None: every file the session's history knows."""
    force: bool = False
    """Files changed outside the session were overwritten (their content kept as blobs first)."""
    planned: dict[str, RewindAction] = field(default_factory=dict)
    """begin: what the plan does to each file."""
    begin_seq: int | None = None
    """end: the seq of the `begin` record this one closes."""
    outcomes: dict[str, RewindOutcome] = field(default_factory=dict)
    """end: what was done to each file."""

    def __post_init__(self) -> None:
        if self.to_seq < 0:
            raise ValueError("to_seq must not be negative")
        if self.stage == "end" and self.begin_seq is None:
            raise ValueError("an end record needs the begin_seq it closes")


# ---- records -----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Event:
    """Envelope every record shares; `seq` and `ts` are assigned by the recorder."""

    __pydantic_config__ = STRICT
    seq: int | None = None
    """Thread-wide position of the record (assigned when written)."""
    ts: str | None = None
    """UTC time the record was written (assigned when written)."""
    data: dict[str, Any] | None = None
    """Free-form extra data of the writer."""


@dataclass(frozen=True, kw_only=True)
class SessionMeta(Event):
    """Line 1 of every rollout: ids, lineage, workspace baseline, permissions, model, client."""

    type: Literal["session_meta"] = "session_meta"
    schema_version: int = SCHEMA_VERSION
    """The rollout format this file is written in."""
    thread_id: str
    """The logical conversation (stable across runs)."""
    session_id: str
    """This process run of the thread."""
    resumed_from: str | None = None
    """The session this one resumed."""
    forked_from: ForkedFrom | None = None
    """Where a forked thread came from."""
    source: Source = "startup"
    """Why this session started."""
    cwd: str
    """The workspace directory."""
    baseline: GitBaseline | None = None
    """The git baseline at the start; None outside git."""
    permissions: Permissions = field(default_factory=Permissions)
    """The permissions the session starts with."""
    model: str | None = None
    """The model the session starts with."""
    client: ClientInfo | None = None
    """The program that writes the session."""
    agent: str | None = None
    """The framework recording through Session Keeper (e.g. langgraph, claude-sdk); absent: native."""
    title: str | None = None
    """The thread's title."""


@dataclass(frozen=True, kw_only=True)
class Lifecycle(Event):
    """A lifecycle transition with its source, reason and (for resume) the decision taken."""

    type: Literal["lifecycle"] = "lifecycle"
    source: Source
    """Which transition."""
    reason: str = ""
    """Why it happened."""
    decision: str | None = None
    """What the user (or CI policy) decided, for a resume."""
    rewind: RewindInfo | None = None
    """For source `rewind`: its plan (stage begin) or its outcome (stage end)."""

    def __post_init__(self) -> None:
        if (self.source == "rewind") != (self.rewind is not None):
            raise ValueError("a rewind lifecycle record (and only one) carries `rewind`")


@dataclass(frozen=True, kw_only=True)
class Message(Event):
    """A conversation message."""

    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "system", "tool"]
    """Who speaks."""
    text: str
    """What was said."""
    message_id: str | None = None
    """The client's id of the message (a re-delivered id is not restored twice)."""


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
class Cost(Event):
    """Tokens and money spent on one model call."""

    type: Literal["cost"] = "cost"
    model: str
    """The model called."""
    input_tokens: int = 0
    """Tokens sent."""
    output_tokens: int = 0
    """Tokens received."""
    usd: float = 0.0
    """Money spent, in US dollars."""


@dataclass(frozen=True, kw_only=True)
class PermissionsChanged(Permissions, Event):
    """Permissions as they now stand."""

    type: Literal["permissions"] = "permissions"


@dataclass(frozen=True, kw_only=True)
class ModelChanged(Event):
    """The model and its overrides as they now stand."""

    type: Literal["model"] = "model"
    name: str
    """The model."""
    overrides: dict[str, Any] = field(default_factory=dict)
    """Settings that differ from the model's defaults."""


@dataclass(frozen=True, kw_only=True)
class Compacted(Event):
    """A summary that replaces the conversation up to `through_seq` (history is kept)."""

    type: Literal["compacted"] = "compacted"
    summary: str
    """The summary the model continues from."""
    through_seq: int
    """The last record the summary covers (0 or more, not beyond the thread)."""

    def __post_init__(self) -> None:
        if self.through_seq < 0:
            raise ValueError("through_seq must not be negative")


@dataclass(frozen=True, kw_only=True)
class Title(Event):
    """The thread's title as it now stands."""

    type: Literal["title"] = "title"
    title: str
    """The title."""


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
class Snapshot(Event):
    """The folded state of every subsystem through `through_seq` of this thread."""

    type: Literal["snapshot"] = "snapshot"
    through_seq: int
    """The last record the state includes."""
    state: dict[str, Any]
    """{"subsystems": {name: state}, "summary": the thread's status summary}."""
    prefix_bytes: int | None = None
    """The file's size before this line ..."""
    prefix_crc: str | None = None
    """... and the CRC32 of those bytes: damage before the snapshot is caught."""


# ---- records of framework adapters (integrations/) ------------------------------------------
# A payload reference: ["inline", serializer type, hex of the bytes] | ["blob", type, blob key] |
# ["empty"]. Payloads are the framework serializer's output, opaque to Session Keeper; lowercase
# hex can never match a credential shape, so redaction leaves them intact. User-chosen names
# (channels, namespaces) are values inside lists, never object keys.


def _check_rows(rows: Sequence[Sequence[object]], what: str, width: int) -> None:
    for row in rows:
        if len(row) != width:
            raise ValueError(f"each of {what} has {width} items, not {len(row)}")


@dataclass(frozen=True, kw_only=True)
class GraphCheckpoint(Event):
    """A framework checkpoint (LangGraph): its ids, metadata, versions and the values it stores."""

    type: Literal["checkpoint"] = "checkpoint"
    thread: str
    """The framework's own thread id, as the caller gave it."""
    ns: str = ""
    """The checkpoint namespace ("" for the root graph)."""
    checkpoint_id: str
    """The checkpoint's id (monotonic: ids sort in creation order)."""
    parent_id: str | None = None
    """The checkpoint this one follows."""
    checkpoint: list[str]
    """[serializer type, hex]: the checkpoint without its channel values."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """The framework's metadata of the checkpoint (source, step, parents, run_id, ...)."""
    versions: list[list[Any]]
    """[[channel, version], ...]: every channel of the checkpoint."""
    values: list[list[Any]] = field(default_factory=list)
    """[[channel, version, payload], ...]: the values stored here; every other channel keeps
    the value it had at the same version in the namespace's previous checkpoint."""

    def __post_init__(self) -> None:
        _check_rows(self.versions, "versions", 2)
        _check_rows(self.values, "values", 3)


@dataclass(frozen=True, kw_only=True)
class GraphWrites(Event):
    """Pending writes of one task against a checkpoint; (task_id, idx) is their identity."""

    type: Literal["checkpoint_writes"] = "checkpoint_writes"
    thread: str
    """The framework's own thread id."""
    ns: str = ""
    """The checkpoint namespace."""
    checkpoint_id: str
    """The checkpoint the writes belong to."""
    task_id: str
    """The task that wrote them."""
    task_path: str = ""
    """The task's path (the order writes of one step are applied in)."""
    writes: list[list[Any]]
    """[[idx, channel, payload], ...]."""

    def __post_init__(self) -> None:
        _check_rows(self.writes, "writes", 3)


@dataclass(frozen=True, kw_only=True)
class GraphRemoved(Event):
    """Checkpoints (and their writes) removed from a framework thread; the log keeps the bytes."""

    type: Literal["checkpoints_removed"] = "checkpoints_removed"
    thread: str
    """The framework's own thread id."""
    removed: list[list[str]]
    """[[ns, checkpoint_id], ...]."""
    reason: str = ""
    """Why (prune, delete_for_runs)."""

    def __post_init__(self) -> None:
        _check_rows(self.removed, "removed", 2)


@dataclass(frozen=True, kw_only=True)
class Transcript(Event):
    """Entries of an agent SDK's transcript (Claude Agent SDK SessionStore), in append order."""

    type: Literal["transcript"] = "transcript"
    project: str
    """The SDK's project key."""
    session: str
    """The SDK's session id."""
    subpath: str | None = None
    """The subagent transcript's subpath; absent for the main transcript."""
    entries: list[dict[str, Any]]
    """The entries, as the SDK gave them (opaque JSON)."""
    summary: dict[str, Any] | None = None
    """The SDK's folded session summary after these entries (opaque, main transcript only)."""


RECORD_CLASSES: tuple[type[Event], ...] = (
    SessionMeta, Lifecycle, Message, Operation, Todo, Verifier, FileChange, Cost,
    PermissionsChanged, ModelChanged, Compacted, Title, Baseline, GitMoved, Snapshot,
    GraphCheckpoint, GraphWrites, GraphRemoved, Transcript,
)


def type_of(cls: type[Event]) -> str:
    """The `type` tag of a record dataclass."""
    tag = next(f.default for f in fields(cls) if f.name == "type")
    assert isinstance(tag, str)
    return tag
