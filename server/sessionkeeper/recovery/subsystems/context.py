"""The conversation to give the model back: the latest compacted summary plus the messages after it.

A `compacted` record replaces every message with seq <= through_seq by its summary (the raw
messages stay in the log, never in the restored context); a lifecycle `clear` drops the context
and nothing else. Never both a summary and the raw messages it replaced.
"""

from __future__ import annotations

import copy
from typing import Any

from .base import Record, Subsystem, register


@register
class Context(Subsystem):
    """{"summary": {text, through_seq, seq} | None, "messages": [{seq, role, text, message_id}]}."""

    name = "context"
    handles = frozenset({"message", "compacted", "lifecycle"})

    def __init__(self) -> None:
        self.compaction: dict[str, Any] | None = None
        self.messages: list[dict[str, Any]] = []
        self._ids: set[str] = set()

    def apply(self, record: Record) -> None:
        """Fold a message, a compaction, or a clear / idle reset (other sources change nothing)."""
        kind, seq = record["type"], record.get("seq")
        if kind == "lifecycle":
            hook_note = "hook_failures" in (record.get("data") or {})  # not a transition itself
            if record.get("source") in ("clear", "idle_reset") and not hook_note:
                self.compaction, self.messages, self._ids = None, [], set()
        elif kind == "compacted":
            through = record["through_seq"]
            self.compaction = {"text": record["summary"], "through_seq": through, "seq": seq}
            self.messages = [m for m in self.messages if (m["seq"] or 0) > through]
            self._ids = {m["message_id"] for m in self.messages if m["message_id"]}
        elif not self._covered(record):
            self.messages.append({"seq": seq, "role": record["role"], "text": record["text"],
                                  "message_id": record.get("message_id")})
            if record.get("message_id"):
                self._ids.add(record["message_id"])

    def _covered(self, record: Record) -> bool:
        """True for a message the summary already replaced, or a re-delivered message_id."""
        seq = record.get("seq")
        through = self.compaction["through_seq"] if self.compaction else None
        if through is not None and seq is not None and seq <= through:
            return True
        mid = record.get("message_id")
        return mid is not None and mid in self._ids

    def snapshot(self) -> dict[str, Any]:
        """Return the summary and the messages after it."""
        return {"summary": copy.deepcopy(self.compaction), "messages": copy.deepcopy(self.messages)}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.compaction = copy.deepcopy(state.get("summary"))
        self.messages = copy.deepcopy(state.get("messages", []))
        self._ids = {m["message_id"] for m in self.messages if m.get("message_id")}

    def conversation(self) -> list[dict[str, Any]]:
        """Return the context to restore: the summary (a system message), then later messages."""
        head = [{"role": "system", "text": self.compaction["text"], "seq": self.compaction["seq"],
                 "summary": True}] if self.compaction else []
        return head + [{**m, "summary": False} for m in self.messages]

    def summary(self) -> dict[str, Any]:
        """Return through which seq a summary is restored and how many messages follow it."""
        through = self.compaction["through_seq"] if self.compaction else None
        return {"compacted_through_seq": through, "messages": len(self.messages)}

    def headline(self) -> str:
        """What the model gets back: the summary and the messages after it."""
        head = f"summary through seq {self.compaction['through_seq']} + " if self.compaction else ""
        return f"{head}{len(self.messages)} message(s)"
