"""Permissions and model are restored exactly from events and compared with what is requested now.

Fixture: `repo` (a real workspace; only `requested` varies).
"""

from __future__ import annotations

from pathlib import Path

from sessionkeeper.recovery.subsystems.base import Difference
from sessionkeeper.recovery.subsystems.model import ModelState
from sessionkeeper.recovery.subsystems.permissions import PermissionsState

from ._recovery import meta, rec, workspace


def test_permissions_default_when_session_meta_omits_them(repo: Path) -> None:
    """Fixture: `repo`, session_meta without permissions."""
    sub = PermissionsState()
    sub.apply(meta(repo))
    assert sub.current() == {"approval_mode": "on-request", "sandbox_policy": "workspace-write",
                             "tool_profile": "default"}


def test_permissions_are_restored_from_the_latest_permissions_event(repo: Path) -> None:
    """Fixture: `repo`, meta then a permissions event (a message claiming otherwise is ignored)."""
    sub = PermissionsState()
    sub.apply(meta(repo, permissions={"approval_mode": "never", "sandbox_policy": "read-only",
                                      "tool_profile": "default"}))
    sub.apply(rec(3, "permissions", approval_mode="on-failure", sandbox_policy="danger-full-access"))
    restored = PermissionsState()
    restored.restore(sub.snapshot())
    assert restored.current() == {"approval_mode": "on-failure",
                                  "sandbox_policy": "danger-full-access", "tool_profile": "default"}
    assert restored.snapshot()["seq"] == 3


def test_permissions_report_each_requested_field_that_differs(repo: Path) -> None:
    """Fixture: `repo`, client now asks for approval_mode=never."""
    sub = PermissionsState()
    sub.apply(meta(repo))
    ws = workspace(repo, {"permissions": {"approval_mode": "never", "tool_profile": "default"}})
    assert sub.validate(ws, {}).differences == [
        Difference("permissions", "on-request", "never", "approval_mode")]


def test_model_is_restored_with_overrides(repo: Path) -> None:
    """Fixture: `repo`, meta model then a model event with overrides."""
    sub = ModelState()
    sub.apply(meta(repo, model="gpt-a"))
    sub.apply(rec(4, "model", name="gpt-b", overrides={"temperature": 0.2}))
    restored = ModelState()
    restored.restore(sub.snapshot())
    assert restored.summary() == {"name": "gpt-b", "overrides": {"temperature": 0.2},
                                  "effective": "gpt-b", "fallback": None}


def test_model_reports_a_different_requested_model(repo: Path) -> None:
    """Fixture: `repo`, client now requests another model."""
    sub = ModelState()
    sub.apply(meta(repo, model="gpt-a"))
    diffs = sub.validate(workspace(repo, {"model": "gpt-z"}), {}).differences
    assert diffs == [Difference("model", "gpt-a", "gpt-z", "requested")]


def test_unknown_model_falls_back_and_is_reported(repo: Path) -> None:
    """Fixture: `repo`, the recorded model is not among the models available now."""
    sub = ModelState()
    sub.apply(meta(repo, model="retired-model"))
    ws = workspace(repo, {"models": ["m1", "m2"], "fallback_model": "m2"})
    diffs = sub.validate(ws, {}).differences
    assert [(d.kind, d.recorded, d.current) for d in diffs] == [("model", "retired-model", "m2")]
    assert sub.summary()["effective"] == "m2" and sub.summary()["name"] == "retired-model"


def test_model_from_session_meta_without_model_keeps_the_previous_one(repo: Path) -> None:
    """Fixture: `repo`, a resumed session's meta that names no model."""
    sub = ModelState()
    sub.apply(rec(1, "model", name="gpt-a"))
    sub.apply(meta(repo, seq=5))
    assert sub.summary()["name"] == "gpt-a"
