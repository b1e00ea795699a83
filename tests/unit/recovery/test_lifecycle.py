"""Lifecycle hooks run in order with timeouts; failures are isolated and recorded.

Fixture: a frozen resume context `{"verdict": "drift", "differences": [...]}` built per test.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from sessionkeeper.recovery.lifecycle import (
    SOURCES,
    Hook,
    HookRegistry,
    run_hooks,
)


def _context() -> dict[str, Any]:
    return {"verdict": "drift", "differences": [{"kind": "branch", "recorded": "fix/payment"}]}


def test_hooks_run_in_order_for_their_sources_only() -> None:
    """Fixture: three hooks with orders 20, 10, and one for `clear` only."""
    seen: list[str] = []
    hooks = [Hook("late", {"resume"}, 20, lambda ctx: seen.append("late")),
             Hook("early", {"resume", "startup"}, 10, lambda ctx: seen.append("early")),
             Hook("other", {"clear"}, 0, lambda ctx: seen.append("other"))]
    run = run_hooks("resume", _context(), hooks=hooks)
    assert seen == ["early", "late"]
    assert [r.hook for r in run.results] == ["early", "late"] and run.failures == []


def test_hooks_add_context_strings_in_run_order() -> None:
    """Fixture: one hook returning a string, one returning a list."""
    hooks = [Hook("a", {"resume"}, 1, lambda ctx: f"verdict was {ctx['verdict']}"),
             Hook("b", {"resume"}, 2, lambda ctx: ["x", "y"]),
             Hook("c", {"resume"}, 3, lambda ctx: None)]
    assert run_hooks("resume", _context(), hooks=hooks).added_context == [
        "verdict was drift", "x", "y"]


def test_a_hook_that_raises_is_recorded_and_the_next_hook_still_runs() -> None:
    """Fixture: a raising hook before a well-behaved one."""
    def explode(ctx: Any) -> str:
        raise RuntimeError("hook bug")

    hooks = [Hook("bad", {"resume"}, 1, explode), Hook("good", {"resume"}, 2, lambda c: "ok")]
    run = run_hooks("resume", _context(), hooks=hooks)
    assert run.failures == [{"hook": "bad", "source": "resume",
                             "error": "RuntimeError('hook bug')"}]
    assert run.added_context == ["ok"]


def test_a_hanging_hook_times_out_and_is_abandoned() -> None:
    """Fixture: a hook blocked on an event that is only set after the run."""
    release = threading.Event()
    hooks = [Hook("hang", {"resume"}, 1, lambda ctx: release.wait(30) and "late", timeout_s=0.05),
             Hook("good", {"resume"}, 2, lambda ctx: "ok")]
    run = run_hooks("resume", _context(), hooks=hooks)
    release.set()
    assert [r.status for r in run.results] == ["timeout", "ok"]
    assert run.failures == [{"hook": "hang", "source": "resume", "error": "timed out after 0.05s"}]
    assert run.added_context == ["ok"]


def test_hooks_cannot_change_the_verdict_they_are_shown() -> None:
    """Fixture: hooks trying to rewrite the verdict and the differences of the context."""
    def rewrite(ctx: Any) -> None:
        ctx["verdict"] = "ok"

    def mutate_nested(ctx: Any) -> None:
        ctx["differences"][0]["kind"] = "none"

    context = _context()
    run = run_hooks("resume", context, hooks=[Hook("w", {"resume"}, 1, rewrite),
                                               Hook("n", {"resume"}, 2, mutate_nested)])
    assert context == _context()
    assert [f["hook"] for f in run.failures] == ["w", "n"]


def test_a_hook_returning_something_else_is_a_failure() -> None:
    """Fixture: a hook returning a dict."""
    run = run_hooks("resume", {}, hooks=[Hook("dict", {"resume"}, 1, lambda ctx: {"a": 1})])
    assert run.failures[0]["hook"] == "dict" and run.added_context == []


def test_hook_rejects_unknown_sources_and_registry_rejects_duplicate_names() -> None:
    """Fixture: a registry with one hook."""
    with pytest.raises(ValueError, match="unknown lifecycle sources"):
        Hook("x", {"reboot"}, 1, lambda ctx: None)
    registry = HookRegistry()
    registry.add(Hook("x", {"clear", "compact"}, 1, lambda ctx: "cleared"))
    with pytest.raises(ValueError, match="twice"):
        registry.add(Hook("x", {"resume"}, 1, lambda ctx: None))
    assert registry.run("clear", {}).added_context == ["cleared"]
    assert registry.for_source("resume") == []
    registry.remove("x")
    assert registry.for_source("clear") == []


def test_every_lifecycle_source_of_the_contract_is_known() -> None:
    """Fixture: none."""
    expected = {"startup", "resume", "clear", "compact", "fork", "idle_reset", "archive"}
    assert expected <= set(SOURCES)
