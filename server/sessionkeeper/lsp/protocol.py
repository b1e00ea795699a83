"""The `session/` protocol's params and results: frozen dataclasses, the one definition of the wire.

Handlers take these params and return these results; `lsp/schema.py` generates the JSON Schema
(and from it the extension's TypeScript types and PROTOCOL.md's tables) from the same classes.
Constraints are declared with `annotated_types`, so they are checked at runtime
(`constraints.check`) and exported to the schema. Nothing here imports pydantic. Params name only
what structuring them needs; results name the recovery types (report, findings, summaries) for
the type checker only — results are converted without their hints, so a started server loads
none of those — and `bind_result_names` binds them for whatever reads the hints (the schema).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

import annotated_types as at

from ..constraints import check
from ..events import Durability, Record
from ..ids import SessionId, ThreadId
from ..recovery.verdicts import Decision, Verdict

if TYPE_CHECKING:  # named by results only, which are never structured: a started server loads none
    from ..recovery.findings import Difference, Invalidation
    from ..recovery.report import AgentCommand, Report
    from ..recovery.summary import Progress, TestResults, ThreadSummary
    from .gitops import Refusal

_DOCS = {"use_attribute_docstrings": True}
DurabilityName = Literal["none", "written", "durable"]


# ---- params ---------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Params:
    """Base of every request's params: unknown keys are ignored; ids and bounds are checked."""

    __pydantic_config__ = _DOCS

    def __post_init__(self) -> None:
        check(self)


@dataclass(frozen=True, kw_only=True)
class NoParams(Params):
    """session/current, session/reindex: nothing (a client's work-done token is honoured)."""

    workDoneToken: str | int | None = None  # noqa: N815 - the LSP spelling
    """A work-done progress token from the client."""


@dataclass(frozen=True, kw_only=True)
class ListParams(Params):
    """session/list: one page of threads, newest first."""

    workspace: str | None = None
    """The workspace to list (default: the open folder); threads of other folders are left out."""
    all: bool = False
    """Include archived threads."""
    archived_only: bool = False
    """Only archived threads (what Unarchive offers)."""
    all_workspaces: bool = False
    """The threads of every workspace (`workspace` is then ignored)."""
    agent: str | None = None
    """Only threads of this agent (native, codex, claude)."""
    machine: str | None = None
    """Only threads whose newest session was recorded on this machine (host name)."""
    cursor: str | None = None
    """The `next_cursor` of the previous page."""
    limit: Annotated[int, at.Interval(ge=1, le=1000)] = 50
    """Threads per page."""


@dataclass(frozen=True, kw_only=True)
class ThreadParams(Params):
    """session/show, session/archive, session/unarchive."""

    thread_id: ThreadId
    """The thread."""


@dataclass(frozen=True, kw_only=True)
class StartParams(Params):
    """session/start: a new thread; it becomes the current session."""

    workspace: str | None = None
    """Where (default: the open folder)."""
    title: Annotated[str, at.Len(0, 500)] | None = None
    """The thread's title."""
    permissions: dict[str, Any] | None = None
    """approval_mode, sandbox_policy, tool_profile."""
    model: str | None = None
    """The model the agent uses."""


@dataclass(frozen=True, kw_only=True)
class RecordParams(Params):
    """session/record: events for the current session, in order."""

    session_id: SessionId
    """The current session."""
    events: Annotated[list[Record], at.Len(1, 10_000)]
    """Records in the rollout vocabulary (`sessionkeeper schema`)."""
    durability: DurabilityName | None = None
    """How far they must get before the answer (default: the server's)."""


@dataclass(frozen=True, kw_only=True)
class CheckResumeParams(Params):
    """session/checkResume: a thread, or the latest one of the workspace; changes nothing."""

    thread_id: ThreadId | None = None
    """The thread (default: the latest of the workspace)."""
    latest: bool = False
    """Take the workspace's latest thread."""
    workspace: str | None = None
    """Where it would resume (default: the open folder)."""


@dataclass(frozen=True, kw_only=True)
class ResumeParams(CheckResumeParams):
    """session/resume: with the user's decision (none: the server asks when the client can)."""

    decision: Decision | None = None
    """What to do about drift or a block."""


@dataclass(frozen=True, kw_only=True)
class ForkParams(Params):
    """session/fork: a new thread from a thread's state at `at_seq`; it becomes current."""

    thread_id: ThreadId
    """The thread to fork."""
    at_seq: Annotated[int, at.Ge(0)] | None = None
    """The last record the fork includes (default: the latest)."""
    workspace: str | None = None
    """Where the fork runs (default: the open folder, else where the thread ran)."""


@dataclass(frozen=True, kw_only=True)
class ClearParams(Params):
    """session/clear: drop the conversation context (cost, model, permissions stay)."""

    session_id: SessionId
    """The current session."""
    reason: str = ""
    """Why."""


@dataclass(frozen=True, kw_only=True)
class CompactParams(Params):
    """session/compact: a summary replaces the conversation so far (history stays in the log)."""

    session_id: SessionId
    """The current session."""
    summary: Annotated[str, at.Len(1, None)]
    """The summary."""


# ---- results --------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ListResult:
    """A page of threads."""

    __pydantic_config__ = _DOCS
    threads: list[ThreadSummary]
    """Newest activity first."""
    next_cursor: str | None = None
    """Pass it back for the next page; None on the last page."""


@dataclass(frozen=True, kw_only=True)
class SessionSummary:
    """One session (process run) of a thread."""

    __pydantic_config__ = _DOCS
    session_id: str
    started_at: str | None
    last_activity: str | None
    source: str
    """Why it started (startup, resume, fork, ...)."""
    resumed_from: str | None
    forked_from: dict[str, Any] | None
    branch: str | None
    last_seq: int
    event_count: int
    status: str
    """ok, or damaged."""
    path: str
    """Its log file."""
    archived: bool


@dataclass(frozen=True, kw_only=True)
class TimelineEntry:
    """One noteworthy record of a thread."""

    __pydantic_config__ = _DOCS
    seq: int | None
    ts: str | None
    type: str
    session_id: str | None
    summary: str
    """One line for humans."""
    path: str | None = None
    """The file a file_change is about (workspace-relative)."""
    author: str | None = None
    """Who changed it (agent, user, external, ...), for a file_change."""


@dataclass(frozen=True, kw_only=True)
class ShowResult:
    """A thread, its sessions and the end of its timeline."""

    __pydantic_config__ = _DOCS
    thread: ThreadSummary
    sessions: list[SessionSummary]
    timeline: list[TimelineEntry]
    """The last entries, oldest first."""
    timeline_total: int
    """Entries in the whole timeline."""
    damaged: list[dict[str, Any]]
    """Damage found while reading the thread."""


@dataclass(frozen=True, kw_only=True)
class Status:
    """The current session, as the status bar shows it (session/current, session/didChange)."""

    __pydantic_config__ = _DOCS
    thread_id: str
    session_id: str
    agent: str
    title: str | None
    branch: str | None
    verdict: Verdict | None
    """The verdict of the resume that made it current (None: started here)."""
    drift: bool
    """It continues over recorded differences."""
    todos: Progress
    tests: TestResults | None
    cost_usd: float
    state: Verdict | None = None
    """The workspace against the session's baseline right now (live drift; None: not checked)."""
    state_reason: str | None = None
    """What differs now, in a few words ("branch fix/payment → main · 2 files changed outside")."""
    differences: list[Difference] = field(default_factory=list)
    """Every live difference, recorded → now."""
    changed_files: list[str] = field(default_factory=list)
    """The session's files that differ on disk now."""
    invalidated: list[Invalidation] = field(default_factory=list)
    """Restored state that can no longer be trusted now (e.g. tests older than an edit)."""
    workspace: str | None = None
    """Where the session runs."""


@dataclass(frozen=True, kw_only=True)
class ThreadsChanged:
    """session/didChangeThreads: the listing changed (a thread started, archived, HEAD moved ...)."""

    __pydantic_config__ = _DOCS
    reason: str
    """What changed: started, forked, resumed, archived, unarchived, reindexed, git, agents (the
    agents' own session files)."""


@dataclass(frozen=True, kw_only=True)
class SwitchBackParams(Params):
    """session/switchBack: check out the branch a thread was recorded on (dry run by default)."""

    thread_id: ThreadId
    """The thread."""
    workspace: str | None = None
    """The worktree to switch (default: the open folder)."""
    dry_run: bool = True
    """Only say whether it can run and what it would do."""


@dataclass(frozen=True, kw_only=True)
class SwitchBackResult:
    """What a switch back would do or did; `refused` says why it did not (nothing ran then)."""

    __pydantic_config__ = _DOCS
    branch: str | None
    """The recorded branch."""
    command: str | None
    """The git command, for display."""
    ran: bool
    """The checkout ran and succeeded."""
    refused: Refusal | None
    """Why it cannot (or did not) run; None: it can (dry run) or it did."""
    message: str
    """One line for humans."""
    worktree: str | None
    """The other worktree that has the branch checked out (refused: other_worktree)."""
    uncommitted: list[str]
    """Tracked files with uncommitted changes (refused: uncommitted)."""


@dataclass(frozen=True, kw_only=True)
class StartResult:
    """The thread and session started (session/start, session/fork)."""

    __pydantic_config__ = _DOCS
    thread_id: str
    session_id: str


@dataclass(frozen=True, kw_only=True)
class AckOut:
    """One record's acknowledgement."""

    __pydantic_config__ = _DOCS
    seq: int
    """The seq it got (for a duplicate: the seq of its first delivery)."""
    durability: Durability
    """How far it got before the answer."""
    duplicate: bool
    """A re-delivery, recognised and not written again."""


@dataclass(frozen=True, kw_only=True)
class RecordResult:
    """session/record's answer: one ack per event, in order."""

    __pydantic_config__ = _DOCS
    acks: list[AckOut]


@dataclass(frozen=True, kw_only=True)
class SeqResult:
    """The seq of the lifecycle record written (session/clear, session/compact)."""

    __pydantic_config__ = _DOCS
    seq: int


@dataclass(frozen=True, kw_only=True)
class ResumeResult:
    """session/resume's answer: the report, and the session now current (if any)."""

    __pydantic_config__ = _DOCS
    report: Report
    thread_id: str
    """The thread now current (a fork's new thread after a fork)."""
    session_id: str | None
    """The new session; None when nothing continued."""
    command: AgentCommand | None = None
    """For an agent's thread: the agent's own command to run (in a terminal) after the check;
    None for our threads, and whenever nothing may continue. An agent's thread never becomes
    the current session."""


@dataclass(frozen=True, kw_only=True)
class ArchiveResult:
    """session/archive, session/unarchive."""

    __pydantic_config__ = _DOCS
    thread_id: str
    archived: bool


@dataclass(frozen=True, kw_only=True)
class ReindexResult:
    """session/reindex: what the rebuilt index holds."""

    __pydantic_config__ = _DOCS
    threads: int
    sessions: int
    damaged: int
    """Files that could not be indexed (see fsck)."""


NOTIFICATIONS: dict[str, Any] = {"session/didChange": Status | None,
                                 "session/didChangeThreads": ThreadsChanged}
"""Server-to-client notifications and their params."""


def bind_result_names() -> None:
    """Bind the names the results declare for the type checker only, so that their hints
    resolve (the schema generator calls this; a server never needs it)."""
    from ..recovery.findings import Difference, Invalidation
    from ..recovery.report import AgentCommand, Report
    from ..recovery.summary import Progress, TestResults, ThreadSummary
    from .gitops import Refusal

    globals().update(Difference=Difference, Invalidation=Invalidation, AgentCommand=AgentCommand,
                     Report=Report, Progress=Progress, TestResults=TestResults,
                     ThreadSummary=ThreadSummary, Refusal=Refusal)
