"""The model and its overrides; an unavailable model falls back, and the fallback is reported."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .base import Difference, Findings, Record, Subsystem, Workspace, register


@register
class ModelState(Subsystem):
    """Model name and overrides from session_meta.model and `model` events.

    `workspace.requested` may hold "model" (what the client asks for now), "models" (the models
    available here) and "fallback_model"; validation records the fallback it chose in `fallback`.
    """

    name = "model"
    handles = frozenset({"session_meta", "model"})

    def __init__(self) -> None:
        self.state: dict[str, Any] = {"name": None, "overrides": {}, "seq": None}
        self.fallback: str | None = None

    def apply(self, record: Record) -> None:
        """Take the model a session_meta starts with (if any), or the one a `model` event sets."""
        if record["type"] == "session_meta":
            if record.get("model") is None:
                return
            if record["model"] != self.state["name"]:  # the same model keeps its overrides
                self.state.update(name=record["model"], overrides={})
        else:
            overrides = copy.deepcopy(record.get("overrides", {}))
            self.state.update(name=record["name"], overrides=overrides)
        self.state["seq"] = record.get("seq")

    def snapshot(self) -> dict[str, Any]:
        """Return name, overrides and the seq they were set at."""
        return copy.deepcopy(self.state)

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.state = copy.deepcopy(state)
        self.fallback = None

    def validate(self, workspace: Workspace, deps: Mapping[str, Subsystem]) -> Findings:
        """Report a requested model that differs, or an unavailable model and its fallback."""
        recorded, requested = self.state["name"], workspace.requested
        self.fallback = None
        if requested.get("model") and requested["model"] != recorded:
            diff = Difference("model", recorded, requested["model"], "requested")
            return Findings(differences=[diff])
        available = requested.get("models")
        if recorded is None or available is None or recorded in available:
            return Findings()
        preferred = requested.get("fallback_model")
        self.fallback = preferred if preferred in available else next(iter(available), None)
        detail = f"{recorded} is not available here; falling back to {self.fallback}"
        return Findings(differences=[Difference("model", recorded, self.fallback, detail)])

    def summary(self) -> dict[str, Any]:
        """Return name, overrides, the effective model and the fallback (None if exact)."""
        effective = self.fallback or self.state["name"]
        return {"name": self.state["name"], "overrides": copy.deepcopy(self.state["overrides"]),
                "effective": effective, "fallback": self.fallback}

    def headline(self) -> str:
        """The effective model (and the fallback taken)."""
        name = self.fallback or self.state["name"]
        if name is None:
            return "not recorded"
        return f"{name} (instead of {self.state['name']})" if self.fallback else str(name)
