"""The agent's todo list as it last stood."""

from __future__ import annotations

import copy
from typing import Any

from .base import Record, Subsystem, register


@register
class Todos(Subsystem):
    """Each `todo` event states the whole list; the newest one wins."""

    name = "todos"
    handles = frozenset({"todo"})

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.seq: int | None = None

    def apply(self, record: Record) -> None:
        """Replace the list with the one the record states (status defaults to pending)."""
        self.items = [{"id": i["id"], "text": i["text"], "status": i.get("status", "pending")}
                      for i in record.get("items", [])]
        self.seq = record.get("seq")

    def snapshot(self) -> dict[str, Any]:
        """Return {"items": [...], "seq": seq of the last todo event}."""
        return {"items": copy.deepcopy(self.items), "seq": self.seq}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.items = copy.deepcopy(state.get("items", []))
        self.seq = state.get("seq")

    def summary(self) -> dict[str, Any]:
        """Return {done, total, items}."""
        done = sum(1 for i in self.items if i["status"] == "done")
        return {"done": done, "total": len(self.items), "items": copy.deepcopy(self.items)}

    def headline(self) -> str:
        """Todos done of total."""
        done = sum(1 for i in self.items if i["status"] == "done")
        return f"{done}/{len(self.items)} done" if self.items else "none recorded"
