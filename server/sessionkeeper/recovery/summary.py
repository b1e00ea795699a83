"""Short summaries of threads: what a listing and a picker show.

`thread_summary` turns an index row (with the status summary its snapshot stored, `status`) into
a ThreadSummary, with an estimate of what a resume would say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..events import GitBaseline, RepoIdentity
from ..store.index import NATIVE, ThreadRow

if TYPE_CHECKING:
    from .findings import Difference
    from .status import StatusSummary

ResumeState = Literal["ok", "drift", "blocked"]
BaselineSource = Literal["hook", "log"]
"""Where an agent thread's recorded baseline comes from: `hook` — Session Keeper's hook journal
(exact, with the commit SHA) — or `log` — reconstructed from the agent's own log."""


@dataclass(frozen=True, kw_only=True)
class Progress:
    """Todos done of total."""

    done: int
    total: int


@dataclass(frozen=True, kw_only=True)
class TestResults:
    """Tests passed of total, as last run."""

    __test__ = False  # not a pytest class
    passed: int
    total: int


@dataclass(frozen=True, kw_only=True)
class ThreadSummary:
    """One thread as a listing or picker shows it."""

    __pydantic_config__ = {"use_attribute_docstrings": True}
    thread_id: str
    """The thread (for agents: the agent's own session id)."""
    agent: str = NATIVE
    """Who recorded it: native (Session Keeper), codex, claude, ..."""
    title: str | None = None
    """The thread's title."""
    cwd: str | None = None
    """Where it last ran."""
    branch: str | None = None
    """The branch it last ran on."""
    model: str | None = None
    """The model it last used."""
    created_at: str | None = None
    """When it started (UTC)."""
    last_activity: str | None = None
    """When it last recorded anything (UTC)."""
    archived: bool = False
    """Moved to the archive."""
    session_count: int = 0
    """Process runs of the thread."""
    event_count: int = 0
    """Records in all its sessions."""
    damaged: bool = False
    """Some session has damage in the middle of its log."""
    forked_from: dict[str, Any] | None = None
    """Where a fork came from: {thread_id, session_id, seq}."""
    machine: str | None = None
    """The machine (host name) its newest session was recorded on."""
    os_user: str | None = None
    """The user who recorded its newest session there."""
    todos: Progress | None = None
    """Todos done of total."""
    tests: TestResults | None = None
    """Tests passed of total, as last run."""
    cost_usd: float | None = None
    """Money spent so far."""
    state: ResumeState | None = None
    """What a resume here would likely say (an estimate from the index; None: not estimated)."""
    state_reason: str | None = None
    """Why the estimate is not ok, in a few words (e.g. "branch fix/payment → main")."""
    current: bool = False
    """The thread is the editor's current session."""
    baseline: BaselineSource | None = None
    """Agent threads: `hook` when Session Keeper's hooks recorded the baseline (exact, with the
    SHA), `log` when it is reconstructed from the agent's own log; None for our own threads."""


def todos_of(summary: Any) -> Progress | None:
    """Todos done of total from a status summary (None when it has none)."""
    value = summary.get("todos")
    if not isinstance(value, dict) or value.get("total") is None:
        return None
    return Progress(done=value.get("done", 0), total=value["total"])


def tests_of(summary: Any) -> TestResults | None:
    """Tests passed of total from a status summary (None when none ran)."""
    value = summary.get("tests")
    if not isinstance(value, dict) or value.get("total") is None:
        return None
    return TestResults(passed=value.get("passed", 0), total=value["total"])


def thread_summary(row: ThreadRow, *, live: StatusSummary | None = None,
                   estimate: tuple[ResumeState, str | None] | None = None,
                   current: bool = False, baseline: BaselineSource | None = None) -> ThreadSummary:
    """A ThreadSummary from an index row (or the live session's summary) and an estimate."""
    summary: Any = live or row.summary or {}
    state, reason = estimate if estimate is not None else (None, None)
    values = {
        "thread_id": row.thread_id, "agent": row.agent, "title": summary.get("title") or row.title,
        "cwd": row.cwd, "branch": summary.get("branch") or row.branch,
        "model": summary.get("model"), "created_at": row.created_at,
        "last_activity": row.last_activity, "archived": row.archived,
        "session_count": row.session_count, "event_count": row.event_count,
        "damaged": row.damaged, "forked_from": row.forked_from, "machine": row.machine,
        "os_user": row.os_user, "todos": todos_of(summary),
        "tests": tests_of(summary), "cost_usd": summary.get("cost_usd"), "state": state,
        "state_reason": reason, "current": current, "baseline": baseline,
    }
    # the frozen __init__ sets each of the 22 fields through object.__setattr__ (~7 us here, a
    # listing makes one per row); the same value made at once costs ~1 us
    made = object.__new__(ThreadSummary)
    made.__dict__.update(values)
    return made


def estimate_state(row: ThreadRow, current: GitBaseline | None) -> tuple[ResumeState, str | None]:
    """What a resume would likely say, from the index alone: the check's own comparison of the
    thread's repository, branch and HEAD (as the index has them) with the workspace's.

    Cheap (no rollout read, no file hashing), so a listing can show it; the real check runs
    on resume and may still find changed files. A listing is of one cwd: the thread's paths are
    taken for the workspace's (no relocation is estimated).
    """
    if row.damaged:
        return "blocked", "log damaged"
    from .comparison import baseline_differences, verdict_of

    recorded, unrecorded = _recorded(row, current)
    diffs = baseline_differences(recorded, current, cwd_exists=True, unrecorded=unrecorded)
    return verdict_of(diffs), _reason(diffs[0], current) if diffs else None


def estimate_key(row: ThreadRow) -> tuple[Any, ...]:
    """Everything of a row that its estimate reads: rows with equal keys are estimated alike
    against one baseline (a listing estimates each key once)."""
    summary: Any = row.summary or {}
    identity = summary.get("identity")
    return (row.damaged, row.imported, row.repo_key, row.branch, row.cwd, summary.get("branch"),
            summary.get("head"), "head" in summary, summary.get("origin"),
            identity.get("outside_git") if isinstance(identity, dict) else identity)


def _recorded(row: ThreadRow, current: GitBaseline | None) -> tuple[GitBaseline | None, set[str]]:
    """The thread's baseline as the index has it, at the workspace's paths, and the fields it
    never stated. None when it names no repository, branch or HEAD: it ran outside git — unless
    it is an agent's log the import found in a repository (Codex's `git: {}` in a repository
    without commits: branch and HEAD unknown)."""
    summary: Any = row.summary or {}
    branch = summary.get("branch") or row.branch
    branch = None if branch == "HEAD" else branch  # Claude Code's word for detached (or no git)
    head = summary.get("head")
    # our own snapshot's summary states HEAD (None: no commits yet); an agent's log may not
    stated = not row.imported and "head" in summary
    unrecorded = set() if head or stated else {"head"}
    if not (row.repo_key or branch or head):
        if not row.imported or (summary.get("identity") or {}).get("outside_git") is True:
            return None, unrecorded
        unrecorded.add("branch")
    where = current or GitBaseline(repo_root=row.cwd, worktree=row.cwd)
    return GitBaseline(repo_root=where.repo_root, worktree=where.worktree,
                       identity=RepoIdentity(root_commits=[row.repo_key] if row.repo_key else [],
                                             remote_url=summary.get("origin")),
                       branch=branch, head=head), unrecorded


def _reason(difference: Difference, current: GitBaseline | None) -> str:
    """An estimate's difference in a few words ("branch fix/payment → main")."""
    d = difference
    if d.kind == "other_repository":
        return ("recorded outside git" if d.recorded is None else "another repository") \
            if current is not None else "outside git here"
    if d.kind == "branch":
        return f"branch {d.recorded or 'detached'} → {d.current or 'detached'}"
    if d.kind == "head":
        return f"HEAD {(d.recorded or 'none')[:7]} → {(d.current or 'none')[:7]}"
    return d.kind.replace("_", " ")
