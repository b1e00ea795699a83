"""The short status of a folded thread: what a status bar, a listing and the index show."""

from __future__ import annotations

from typing import Any


def status_summary(state: Any, meta: dict[str, Any]) -> dict[str, Any]:
    """Title, branch, todos done/total, tests passed/total, cost and model of a state."""
    todos = state["todos"].summary()
    tests = state["verifier"].summary().get("tests")
    return {
        "title": meta.get("title"),
        "branch": (meta.get("baseline") or {}).get("branch"),
        "todos": {"done": todos["done"], "total": todos["total"]},
        "tests": {"passed": tests["passed"], "total": tests["total"]}
        if tests and tests.get("total") is not None else None,
        "cost_usd": state["cost"].totals()["usd"],
        "model": state["model"].summary().get("effective"),
    }
