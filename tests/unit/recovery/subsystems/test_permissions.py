"""Permissions are restored exactly from events and compared with what is requested now (`repo`)."""

from __future__ import annotations

from pathlib import Path

from sessionkeeper.recovery.subsystems.base import Difference
from sessionkeeper.recovery.subsystems.permissions import PermissionsState
from tests.unit._recovery import meta, rec, workspace


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
    sub.apply(rec(3, "permissions", approval_mode="on-failure",
                  sandbox_policy="danger-full-access"))
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
