"""A session's status summary: what a status bar shows of its state, also stored in snapshots
and the index (so a listing shows a thread without reading its log).

Computed from a folded state when a session is summed up (a snapshot, a check); the listing's
values made from it are `summary`'s (a start or a check imports none of them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from ..events import Record
    from .state import SessionState


class StatusSummary(TypedDict):
    """What a status bar shows of a session's state (also stored in snapshots and the index)."""

    title: str | None
    branch: str | None
    head: str | None
    todos: dict[str, int]
    tests: dict[str, int] | None
    cost_usd: float
    model: str | None
    origin: str | None
    """The recorded repository's origin URL (redacted): what tells it in a clone without root
    commits (a shallow one), for a listing's estimate."""


def status_summary(state: SessionState, meta: Record) -> StatusSummary:
    """Title, branch, todos done/total, tests passed/total, cost and model of a state."""
    from .subsystems.cost import CostState
    from .subsystems.model import ModelState
    from .subsystems.todos import Todos
    from .subsystems.verifier import VerifierState
    from .subsystems.worktree import Worktree

    todos = state.get(Todos).summary()
    tests = state.get(VerifierState).summary().get("tests")
    baseline = _mapping(state.get(Worktree).snapshot().get("baseline") or meta.get("baseline"))
    return {
        "title": meta.get("title"),
        "branch": _text(baseline.get("branch")),
        "head": _text(baseline.get("head")),
        "todos": {"done": todos["done"], "total": todos["total"]},
        "tests": {"passed": tests["passed"], "total": tests["total"]}
        if tests and tests.get("total") is not None else None,
        "cost_usd": state.get(CostState).totals()["usd"],
        "model": state.get(ModelState).summary().get("effective"),
        "origin": _text(_mapping(baseline.get("identity")).get("remote_url")),
    }


def _mapping(value: object) -> dict[str, Any]:
    """`value` if it is an object, else {}: a crafted state's other shapes sum up to nothing
    (the resume check reports them)."""
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str | None:
    """`value` if it is a string, else None (as for `_mapping`)."""
    return value if isinstance(value, str) else None
