"""The conversation to give the model back: the latest compacted summary plus the messages after it.

A `compacted` record replaces every message with seq <= through_seq by its summary (the raw
messages stay in the log, never in the restored context); a lifecycle `clear` drops the context
and nothing else. Never both a summary and the raw messages it replaced.

Invariants (issue 13): the state is bounded whatever the history — the messages themselves stay
in the log; the state keeps where the conversation starts (`floor`), how many messages follow,
the latest message_ids (to recognise a re-delivery), and a small window of the latest messages
(WINDOW_MESSAGES, WINDOW_BYTES; a message over BIG_TEXT is kept there by seq, its text not
copied). `conversation()`
answers from the window while it holds every message since the floor, else reads them back from
the log (`self.log`); a re-delivered message_id is dropped there exactly, and counted once
live as long as it is among the last RECENT_IDS ids.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from .base import Record, Subsystem, register

WINDOW_MESSAGES = 64
WINDOW_BYTES = 32 * 1024
BIG_TEXT = 8 * 1024
RECENT_IDS = 1024
_MESSAGE = frozenset({"message"})


class RecentIds:
    """The latest `size` message ids in order, with a membership test in constant time (an id is
    a string: anything else, as a crafted rollout may hold, is no id and never matches)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.order: deque[str] = deque()
        self.counts: dict[str, int] = {}  # a multiset: a restored list may repeat an id

    def append(self, mid: object) -> None:
        """Add an id; the oldest one goes once `size` are held."""
        if not isinstance(mid, str):
            return
        if len(self.order) >= self.size:
            old = self.order.popleft()
            left = self.counts[old] - 1
            if left:
                self.counts[old] = left
            else:
                del self.counts[old]
        self.order.append(mid)
        self.counts[mid] = self.counts.get(mid, 0) + 1

    def extend(self, ids: list[Any]) -> None:
        """Add ids in order."""
        for mid in ids:
            self.append(mid)

    def clear(self) -> None:
        """Forget every id."""
        self.order.clear()
        self.counts.clear()

    def __contains__(self, mid: object) -> bool:
        return isinstance(mid, str) and mid in self.counts

    def __iter__(self) -> Iterator[str]:
        return iter(self.order)


@register
class Context(Subsystem):
    """{"summary": {through_seq, seq, text?} | None, "floor", "count", "ids", "window", ...}."""

    name = "context"
    handles = frozenset({"message", "compacted", "lifecycle"})

    def __init__(self) -> None:
        self.compaction: dict[str, Any] | None = None  # text only when short (else in the log)
        self.cleared_at = -1  # seq of the latest clear / idle reset
        self.count = 0  # messages after the floor (re-deliveries of recent ids not counted)
        self.ids = RecentIds(RECENT_IDS)
        self.window: deque[dict[str, Any]] = deque()
        self.window_bytes = 0
        self.complete = True  # the window holds every message after the floor
        self.last_seq = -1  # the newest seq folded here: the conversation ends there
        self.last_message_seq = -1

    @property
    def floor(self) -> int:
        """Messages with a seq above this belong to the conversation."""
        through = self.compaction["through_seq"] if self.compaction else -1
        return max(through, self.cleared_at)

    def apply(self, record: Record) -> None:
        """Fold a message, a compaction, or a clear / idle reset (other sources change nothing)."""
        kind, seq = record["type"], record.get("seq")
        if isinstance(seq, int) and seq > self.last_seq:
            self.last_seq = seq
        if kind == "message":
            if not self._covered(record):
                self._add({"seq": seq, "role": record["role"], "text": record["text"],
                           "message_id": record.get("message_id")})
                if isinstance(seq, int) and seq > self.last_message_seq:
                    self.last_message_seq = seq
        elif kind == "lifecycle":
            hook_note = "hook_failures" in (record.get("data") or {})  # not a transition itself
            if record.get("source") in ("clear", "idle_reset") and not hook_note:
                self.compaction = None
                self.cleared_at = seq if isinstance(seq, int) else self.last_seq
                self._reset()
        elif kind == "compacted":
            through, text = record["through_seq"], record["summary"]
            kept = [m for m in self.window if (m["seq"] or 0) > through]
            # the window is the newest messages, in order: it holds every one after `through`
            # when it was complete, or when it reaches back to `through` (or nothing is after it)
            exact = (self.complete or self.last_message_seq <= through
                     or (bool(self.window) and (self.window[0]["seq"] or 0) <= through + 1))
            self.compaction = {"through_seq": through, "seq": seq,
                               "text": text if len(text) <= BIG_TEXT else None}
            self._reset()
            for m in kept:
                self._add(m)
            if not exact:
                self.complete, self.count = False, -1  # recounted from the log when asked

    def _reset(self) -> None:
        self.count, self.window_bytes, self.complete = 0, 0, True
        self.ids.clear()
        self.window.clear()

    def _add(self, message: dict[str, Any]) -> None:
        """Count a message and keep it in the window (a big one as a reference: text None)."""
        if self.count >= 0:
            self.count += 1
        if message["message_id"]:
            self.ids.append(message["message_id"])
        text = message["text"]
        if text is not None and len(text) > BIG_TEXT:
            message = {**message, "text": None}
        self.window.append(message)
        self.window_bytes += len(message["text"] or "")
        while len(self.window) > WINDOW_MESSAGES or self.window_bytes > WINDOW_BYTES:
            self.window_bytes -= len(self.window.popleft()["text"] or "")
            self.complete = False

    def _covered(self, record: Record) -> bool:
        """True for a message the summary already replaced, or a re-delivered message_id."""
        seq = record.get("seq")
        if seq is not None and (seq <= self.cleared_at or seq <= -1 or (  # seq <= floor, without
                self.compaction is not None and seq <= self.compaction["through_seq"])):  # max()
            return True
        mid = record.get("message_id")
        return mid is not None and mid in self.ids

    def snapshot(self) -> dict[str, Any]:
        """Return where the conversation starts and its bounded window (never its whole text)."""
        return {"summary": dict(self.compaction) if self.compaction else None, "format": 2,
                "cleared_at": self.cleared_at, "count": self.count, "ids": list(self.ids),
                "window": list(self.window), "complete": self.complete,
                "last_seq": self.last_seq, "last_message_seq": self.last_message_seq}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot (its lists are taken, not copied: read-only here)."""
        self.__init__()  # type: ignore[misc]
        summary = state.get("summary")
        if state.get("format") != 2:  # a snapshot of every message since the summary (schema 2)
            messages = state.get("messages", [])
            if summary is not None:
                self.compaction = {"through_seq": summary["through_seq"], "seq": summary["seq"],
                                   "text": summary.get("text")}
            if messages:
                self.cleared_at = max(self.floor, (messages[0].get("seq") or 0) - 1)
            for m in messages:
                self._add({"seq": m.get("seq"), "role": m.get("role"), "text": m.get("text", ""),
                           "message_id": m.get("message_id")})
            self.last_seq = max([m.get("seq") or -1 for m in messages] + [self.floor])
            self.last_message_seq = self.last_seq
            return
        self.compaction = dict(summary) if summary else None
        self.cleared_at = int(state.get("cleared_at", -1))
        self.count = int(state.get("count", 0))
        self.ids.extend(state.get("ids", []))
        self.window.extend(state.get("window", []))
        self.window_bytes = sum(len(m["text"] or "") for m in self.window)
        self.complete = bool(state.get("complete", True))
        self.last_seq = int(state.get("last_seq", -1))
        self.last_message_seq = int(state.get("last_message_seq", self.last_seq))

    def conversation(self) -> list[dict[str, Any]]:
        """Return the context to restore: the summary (a system message), then later messages.

        Raises LookupError when the messages are needed from the log and no log is attached.
        """
        head = []
        if self.compaction:
            text = self.compaction.get("text")
            if text is None:
                text = self._from_log(self.compaction["seq"])["summary"]
            head = [{"role": "system", "text": text, "seq": self.compaction["seq"],
                     "summary": True}]
        return head + [{**m, "summary": False} for m in self.messages()]

    def messages(self) -> list[dict[str, Any]]:
        """The messages after the floor, from the window when it holds them all, else the log."""
        if self.complete and all(m["text"] is not None for m in self.window):
            return list(self.window)
        seen: set[str] = set()
        out = []
        for record in self._log(self.floor, self.last_seq, _MESSAGE):
            mid = record.get("message_id")
            if isinstance(mid, str):  # as RecentIds: anything else is no id
                if mid in seen:
                    continue
                seen.add(mid)
            out.append({"seq": record["seq"], "role": record["role"], "text": record["text"],
                        "message_id": mid})
        return out

    def _log(self, after: int, through: int, types: frozenset[str] | None) -> Any:
        if self.log is None:
            raise LookupError("the conversation is in the log: this state has no log attached")
        return self.log(after, through, types)

    def _from_log(self, seq: int) -> Record:
        for record in self._log(seq - 1, seq, None):
            return record
        raise LookupError(f"record {seq} is not in the thread's log")

    def summary(self) -> dict[str, Any]:
        """Return through which seq a summary is restored and how many messages follow it."""
        through = self.compaction["through_seq"] if self.compaction else None
        count = self.count if self.count >= 0 else len(self.messages())
        return {"compacted_through_seq": through, "messages": count}

    def headline(self) -> str:
        """What the model gets back: the summary and the messages after it."""
        head = f"summary through seq {self.compaction['through_seq']} + " if self.compaction else ""
        return f"{head}{self.summary()['messages']} message(s)"
