"""The resume report: one verdict and everything that explains it (the `--json` and LSP shape).

Verdicts, decisions and the choices each verdict offers are defined in `verdicts.py`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .findings import Difference, Invalidation, SubsystemReport
from .verdicts import CHOICES, DECISIONS, VERDICTS, Decision, Verdict

__all__ = ["CHOICES", "DECISIONS", "VERDICTS", "Decision", "Verdict"]  # re-exported


@dataclass(frozen=True, kw_only=True)
class Report:
    """The outcome of a resume check: exactly one verdict, with its reasons and the state."""

    __pydantic_config__ = {"use_attribute_docstrings": True}
    verdict: Verdict
    """The one verdict."""
    thread_id: str
    """The thread checked."""
    restored_to_seq: int
    """The last record the state was restored to (-1: nothing readable)."""
    workspace: str
    """The workspace checked against."""
    agent: str = "native"
    """Which agent recorded the thread (native, codex, claude, ...)."""
    title: str | None = None
    """The thread's title."""
    differences: list[Difference] = field(default_factory=list)
    """Every way the workspace differs from the recording."""
    invalidated: list[Invalidation] = field(default_factory=list)
    """Restored state that can no longer be trusted, and why."""
    subsystems: dict[str, SubsystemReport] = field(default_factory=dict)
    """Every restored subsystem: its summary and a line for humans."""
    in_doubt_operations: list[dict[str, Any]] = field(default_factory=list)
    """Tool calls started and never committed: a human must check them before re-running."""
    duplicate_operations: list[dict[str, Any]] = field(default_factory=list)
    """Re-delivered operations, recognised and not repeated."""
    rerun_verifier: bool = False
    """The tests or review must run again (a file changed after them)."""
    quarantined: list[dict[str, Any]] = field(default_factory=list)
    """Torn tails cut off (or, in a dry run, that would be cut off)."""
    damaged: list[dict[str, Any]] = field(default_factory=list)
    """Damage in the middle of a log, with its line."""
    notes: list[str] = field(default_factory=list)
    """Things the user should know that do not change the verdict (e.g. git checks skipped)."""
    facts: dict[str, Any] = field(default_factory=dict)
    """Where the recorded facts came from and how old they are (agents' own logs)."""
    choices: list[Decision] = field(default_factory=list)
    """The decisions this verdict offers."""
    switch_back: str | None = None
    """The command that would restore the recorded branch (None when it cannot work)."""
    switch_back_worktree: str | None = None
    """The recorded branch is checked out in this other worktree: open it instead."""
    relocate_to: str | None = None
    """Where the recorded repository now lives (its cwd is missing)."""
    decision: Decision | None = None
    """The decision taken (a real resume)."""
    continued: bool = False
    """A new session was started."""
    session_id: str | None = None
    """The new session, when one was started."""
    new_thread_id: str | None = None
    """The fork, when one was made."""
    export_path: str | None = None
    """Where the export was written."""
    reset: str | None = None
    """Why the reset policy cleared the context on this resume."""
    hook_failures: list[dict[str, Any]] = field(default_factory=list)
    """Lifecycle hooks that failed or hung (they never change the verdict)."""
    hook_context: list[str] = field(default_factory=list)
    """Context the lifecycle hooks added."""

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-able data."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        """A report from its JSON (e.g. the output of `--check-resume --json`)."""
        return cls(**{**data,
                      "differences": [Difference(**d) for d in data.get("differences", [])],
                      "invalidated": [Invalidation(**i) for i in data.get("invalidated", [])],
                      "subsystems": {k: SubsystemReport(**v)
                                     for k, v in data.get("subsystems", {}).items()}})


@dataclass(frozen=True, kw_only=True)
class AgentCommand:
    """The agent's own command that continues one of its threads: run `argv` in `cwd`."""

    __pydantic_config__ = {"use_attribute_docstrings": True}
    argv: list[str]
    """The command and its arguments (e.g. `codex resume <id>`, `claude --resume <id>`)."""
    cwd: str
    """The directory to run it in (where the check found the workspace)."""
    display: str
    """The command as a shell line, for humans."""
