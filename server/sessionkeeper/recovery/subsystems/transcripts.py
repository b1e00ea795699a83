"""An agent SDK's transcript kept in a thread (Claude Agent SDK): its keys, size and summary.

The entries themselves stay in the log (a load reads them back in order); the state holds only
the SDK's keys, how many entries were appended, and the SDK's folded summary as last recorded —
so a snapshot stays small however long the transcript grows.
"""

from __future__ import annotations

import copy
from typing import Any

from .base import Record, Subsystem, register


@register
class Transcripts(Subsystem):
    """project / session / subpath of the transcript, its entry count and latest summary."""

    name = "transcripts"
    handles = frozenset({"transcript"})

    def __init__(self) -> None:
        self.state: dict[str, Any] = {"project": None, "session": None, "subpath": None,
                                      "entries": 0, "summary": None, "seq": None}

    def apply(self, record: Record) -> None:
        """Count the entries; take the keys and the summary (when the record carries one)."""
        state = self.state
        for key in ("project", "session", "subpath"):
            state[key] = record.get(key, state[key])
        state["entries"] += len(record.get("entries") or [])
        if record.get("summary") is not None:
            state["summary"] = record["summary"]
        state["seq"] = record.get("seq")

    def summary_data(self) -> dict[str, Any] | None:
        """The SDK's summary as last recorded (a copy), or None."""
        return copy.deepcopy(self.state["summary"])

    def snapshot(self) -> dict[str, Any]:
        """Return keys, entry count, summary and the seq of the last transcript record."""
        return copy.deepcopy(self.state)

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.state = {**self.state, **copy.deepcopy(state)}

    def headline(self) -> str:
        """Entries recorded (empty when none: not an SDK transcript)."""
        if not self.state["entries"]:
            return ""
        where = f" ({self.state['subpath']})" if self.state["subpath"] else ""
        return f"{self.state['entries']} transcript entries{where}"
