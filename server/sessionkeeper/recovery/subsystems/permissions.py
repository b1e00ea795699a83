"""What the agent may do: approval mode, sandbox policy, tool profile — restored from events."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ...events import DEFAULT_APPROVAL, DEFAULT_SANDBOX, DEFAULT_TOOLS, PERMISSION_FIELDS
from .base import Difference, Findings, Record, Subsystem, Workspace, register

FIELDS = PERMISSION_FIELDS


def _defaults() -> dict[str, Any]:
    return dict(zip(FIELDS, (DEFAULT_APPROVAL, DEFAULT_SANDBOX, DEFAULT_TOOLS), strict=True))


@register
class PermissionsState(Subsystem):
    """Permissions as last recorded (session_meta.permissions, then each `permissions` event)."""

    name = "permissions"
    handles = frozenset({"session_meta", "permissions"})

    def __init__(self) -> None:
        self.state: dict[str, Any] = {**_defaults(), "seq": None}

    def apply(self, record: Record) -> None:
        """Replace the permissions with those the record states (absent fields: the defaults)."""
        meta = record["type"] == "session_meta"
        source = (record.get("permissions") or {}) if meta else record
        defaults = _defaults()
        for key in FIELDS:
            self.state[key] = source.get(key, defaults[key])
        self.state["seq"] = record.get("seq")

    def snapshot(self) -> dict[str, Any]:
        """Return the three fields and the seq they were set at."""
        return copy.deepcopy(self.state)

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.state = copy.deepcopy(state)

    def current(self) -> dict[str, str]:
        """Return the restored permissions (without the seq)."""
        return {key: self.state[key] for key in FIELDS}

    def validate(self, workspace: Workspace, deps: Mapping[str, Subsystem]) -> Findings:
        """Report each field the resuming client requests differently (kind `permissions`)."""
        requested = workspace.requested.get("permissions") or {}
        diffs = [
            Difference("permissions", self.state[key], requested[key], key)
            for key in FIELDS
            if key in requested and requested[key] != self.state[key]
        ]
        return Findings(differences=diffs)

    def summary(self) -> dict[str, Any]:
        """Return the restored permissions."""
        return self.current()

    def headline(self) -> str:
        """The three permission fields."""
        return ", ".join(f"{k}={self.state[k]}" for k in FIELDS)
