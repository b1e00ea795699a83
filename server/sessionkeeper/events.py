"""The rollout event vocabulary: pydantic models discriminated by `type`, and the schema version.

Models validate what arrives from outside (API, CLI, LSP) and generate the JSON Schema.
Stored records are plain dicts (`{"seq", "ts", "type", ...}`): reading a rollout never builds models.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal, Union

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .errors import InvalidEvent

SCHEMA_VERSION = 2
"""Version written to every `session_meta`. 1 = pre-release draft (nested `payload`, no checksum)."""


class Durability(str, Enum):
    """How far a record must get before `record()` returns."""

    NONE = "none"  # buffered in the process; lost on a kill
    WRITTEN = "written"  # in the kernel; survives a process kill
    DURABLE = "durable"  # fsynced; survives power loss if the disk honours flushes


Source = Literal[
    "startup", "resume", "clear", "compact", "fork", "idle_reset", "archive", "unarchive", "shutdown"
]
"""Why a lifecycle transition happened."""


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Permissions(_Part):
    """What the agent may do: restored exactly, never inferred from text."""

    approval_mode: str = "on-request"
    sandbox_policy: str = "workspace-write"
    tool_profile: str = "default"


class RepoIdentity(_Part):
    """Identity of a repository that survives a move: root commits and the origin URL."""

    root_commits: list[str] = []
    remote_url: str | None = None


class GitBaseline(_Part):
    """Where the session runs: repository, worktree, branch, HEAD and a dirty fingerprint."""

    repo_root: str | None = None
    worktree: str | None = None
    identity: RepoIdentity | None = None
    branch: str | None = None
    head: str | None = None
    dirty: str | None = None


class ForkedFrom(_Part):
    """The point of the parent thread a fork starts from."""

    thread_id: str
    session_id: str
    seq: int


class ClientInfo(_Part):
    """Which program wrote the session."""

    name: str
    version: str | None = None


class TodoItem(_Part):
    """One todo of the agent."""

    id: str
    text: str
    status: Literal["pending", "in_progress", "done"] = "pending"


class Event(_Part):
    """Envelope every record shares; `seq` and `ts` are assigned by the recorder."""

    seq: int | None = None
    ts: str | None = None
    data: dict[str, Any] | None = None


class SessionMeta(Event):
    """Line 1 of every rollout: ids, lineage, workspace baseline, permissions, model, client."""

    type: Literal["session_meta"] = "session_meta"
    schema_version: int = SCHEMA_VERSION
    thread_id: str
    session_id: str
    resumed_from: str | None = None
    forked_from: ForkedFrom | None = None
    source: Source = "startup"
    cwd: str
    baseline: GitBaseline | None = None
    permissions: Permissions = Permissions()
    model: str | None = None
    client: ClientInfo | None = None
    title: str | None = None


class Lifecycle(Event):
    """A lifecycle transition with its source, reason and (for resume) the decision taken."""

    type: Literal["lifecycle"] = "lifecycle"
    source: Source
    reason: str = ""
    decision: str | None = None


class Message(Event):
    """A conversation message."""

    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "system", "tool"]
    text: str
    message_id: str | None = None


class Operation(Event):
    """A tool side effect, keyed by `operation_id`: started, then committed or failed."""

    type: Literal["operation"] = "operation"
    operation_id: str
    tool: str
    status: Literal["started", "committed", "failed"]
    args_digest: str | None = None
    args: dict[str, Any] | None = None
    result_persisted: bool = False
    result: Any = None


class Todo(Event):
    """The whole todo list as it now stands."""

    type: Literal["todo"] = "todo"
    items: list[TodoItem]


class Verifier(Event):
    """A verification checkpoint: a test run or a review with its findings."""

    type: Literal["verifier"] = "verifier"
    kind: Literal["tests", "review"] = "tests"
    passed: int | None = None
    total: int | None = None
    findings: list[str] = []
    checkpoint: str | None = None
    command: str | None = None


class FileChange(Event):
    """A file version written or seen, with who wrote it."""

    type: Literal["file_change"] = "file_change"
    path: str
    before_hash: str | None = None
    after_hash: str | None = None
    author: Literal["agent", "user", "external"] = "agent"


class Cost(Event):
    """Tokens and money spent on one model call."""

    type: Literal["cost"] = "cost"
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0


class PermissionsChanged(Permissions, Event):
    """Permissions as they now stand."""

    type: Literal["permissions"] = "permissions"


class ModelChanged(Event):
    """The model and its overrides as they now stand."""

    type: Literal["model"] = "model"
    name: str
    overrides: dict[str, Any] = {}


class Compacted(Event):
    """A summary that replaces the conversation up to `through_seq` (history is kept)."""

    type: Literal["compacted"] = "compacted"
    summary: str
    through_seq: int


class Title(Event):
    """The thread's title as it now stands."""

    type: Literal["title"] = "title"
    title: str


class Baseline(GitBaseline, Event):
    """The workspace baseline refreshed mid-session (e.g. after the agent committed)."""

    type: Literal["baseline"] = "baseline"


class Snapshot(Event):
    """The folded state of every subsystem through `through_seq` of this thread."""

    type: Literal["snapshot"] = "snapshot"
    through_seq: int
    state: dict[str, Any]
    prefix_bytes: int | None = None  # the file's size before this line ...
    prefix_crc: str | None = None  # ... and the CRC32 of those bytes: damage before it is caught


AnyEvent = Annotated[
    Union[  # noqa: UP007 - pydantic discriminated unions read best this way
        SessionMeta, Lifecycle, Message, Operation, Todo, Verifier, FileChange,
        Cost, PermissionsChanged, ModelChanged, Compacted, Title, Baseline, Snapshot,
    ],
    Field(discriminator="type"),
]
EVENT_TYPES = frozenset(
    m.model_fields["type"].default
    for m in (SessionMeta, Lifecycle, Message, Operation, Todo, Verifier, FileChange,
              Cost, PermissionsChanged, ModelChanged, Compacted, Title, Baseline, Snapshot)
)

_ADAPTER: TypeAdapter[Any] = TypeAdapter(AnyEvent)


def validate_event(raw: Any) -> Event:
    """Validate one event (a dict or a model) from outside; raise InvalidEvent with the reason."""
    if isinstance(raw, Event):
        return raw
    try:
        return _ADAPTER.validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "event"
        raise InvalidEvent(f"{where}: {first['msg']}") from None


def event_body(raw: dict[str, Any] | Event) -> bytes:
    """Validate an event and return its JSON without `seq`/`ts` (the recorder adds those).

    A dict is encoded as given (strict validation guarantees it is already well-typed);
    a model is dumped without unset optionals.
    """
    event = validate_event(raw)
    if isinstance(raw, Event):
        return _ADAPTER.dump_json(event, exclude_none=True, exclude={"seq", "ts"})
    if "seq" in raw or "ts" in raw:
        raw = {k: v for k, v in raw.items() if k not in ("seq", "ts")}
    return orjson.dumps(raw)


def json_schema() -> dict[str, Any]:
    """Return the JSON Schema of one rollout line."""
    schema = _ADAPTER.json_schema()
    schema["title"] = f"Session Keeper rollout record (schema_version {SCHEMA_VERSION})"
    return schema


def schema_version_of(meta: dict[str, Any]) -> Any:
    """The schema version a `session_meta` record declares (schema 1 nested it in `payload`)."""
    if "schema_version" in meta:
        return meta["schema_version"]
    return (meta.get("payload") or {}).get("schema_version")


def upcast(record: dict[str, Any], version: int) -> dict[str, Any]:
    """Bring a record of an older schema version up to the current one (the one place for this)."""
    if version == 1:
        payload = record.pop("payload", None) or {}
        record["ts"] = record.pop("timestamp", None)
        record.update(payload)
        if record.get("type") == "session_meta":
            record["schema_version"] = SCHEMA_VERSION
    return record


def dumps(obj: Any) -> bytes:
    """Encode JSON the one way the project does (orjson; no fallback serializer)."""
    return orjson.dumps(obj)
