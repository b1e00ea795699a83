"""The resume report: one verdict and everything that explains it (the `--json` shape)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Verdict = Literal["ok", "drift", "blocked"]
DRIFT_CHOICES = ["continue", "switch_back", "fork", "cancel"]
BLOCKED_CHOICES = ["relocate", "fork", "export"]


class DifferenceOut(BaseModel):
    """How the workspace differs from the recording."""

    kind: str
    recorded: Any = None
    current: Any = None
    detail: str = ""


class InvalidationOut(BaseModel):
    """Restored state that can no longer be trusted."""

    subsystem: str
    reason: str


class Report(BaseModel):
    """The outcome of a resume check: exactly one verdict, with its reasons and the state."""

    verdict: Verdict
    thread_id: str
    restored_to_seq: int
    workspace: str
    differences: list[DifferenceOut] = Field(default_factory=list)
    invalidated: list[InvalidationOut] = Field(default_factory=list)
    in_doubt_operations: list[dict[str, Any]] = Field(default_factory=list)
    duplicate_operations: list[dict[str, Any]] = Field(default_factory=list)
    rerun_verifier: bool = False
    quarantined: list[dict[str, Any]] = Field(default_factory=list)
    damaged: list[dict[str, Any]] = Field(default_factory=list)
    hook_failures: list[dict[str, Any]] = Field(default_factory=list)
    hook_context: list[str] = Field(default_factory=list)
    choices: list[str] = Field(default_factory=list)
    decision: str | None = None
    switch_back: str | None = None  # the git command that would restore the recorded branch
    continued: bool = False  # a new session was started
    session_id: str | None = None  # the new session, when one was started
    new_thread_id: str | None = None  # the fork, when one was made
    export_path: str | None = None
    relocate_to: str | None = None  # where the recorded repository now lives (cwd missing)
    reset: str | None = None  # why the reset policy cleared the context on this resume
    title: str | None = None
    todos: dict[str, Any] = Field(default_factory=dict)
    verifier: dict[str, Any] = Field(default_factory=dict)
    cost: dict[str, Any] = Field(default_factory=dict)
    permissions: dict[str, Any] = Field(default_factory=dict)
    model: dict[str, Any] = Field(default_factory=dict)
    attribution: dict[str, Any] = Field(default_factory=dict)
    context: dict[str, Any] = Field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-able dict."""
        return self.model_dump(mode="json")
