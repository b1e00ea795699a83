"""The base of every translator: agent JSON lines in, our records (contiguous seq, ts) out.

A translator is fed parsed lines in file order and emits records in our vocabulary (events.py).
Its `state` is JSON-able and carries everything needed to continue after a checkpoint: the last
seq, per-line context (cwd, model, open tool calls ...) and the counters a listing shows.
Invariants: seq is contiguous from 1 (the synthesized session_meta is seq 0); counters are
derived from the records emitted (and counted again after a rewind filter), never from lines, so
a dropped (rewound) record never counts; a line that cannot be mapped is counted (`unmappable`), never fatal.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, ClassVar

import orjson

from ..redact import redact_text
from .base import AgentFile, derived_session_id
from .reads import LineDamage

Record = dict[str, Any]
MESSAGE_CAP = 2000
TITLE_CAP = 120
DAMAGE_KEPT = 100  # damage entries kept in the state (all are counted)
MAX_TOKENS = (1 << 40) - 1
"""The largest token count taken from a log (a trillion: no model call comes near); a larger
or negative one is no count, so the sums a file adds up stay far inside 64 bits."""
_OPERATION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_COUNTED = {"message": "messages", "file_change": "file_changes", "todo": "todos",
            "compacted": "compactions"}


def capped(text: str, cap: int = MESSAGE_CAP) -> str:
    """`text` cut to `cap` characters, with an ellipsis when cut."""
    return text if len(text) <= cap else text[: cap - 1] + "…"


def one_line(text: str, cap: int = TITLE_CAP) -> str:
    """The first non-blank line of `text`, whitespace collapsed, cut to `cap` (a title)."""
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if line:
            return capped(line, cap)
    return ""


def operation_id(raw: object) -> str | None:
    """A tool call id usable as our operation_id: as is when valid, else a stable digest of it."""
    if not isinstance(raw, str) or not raw:
        return None
    if len(raw) <= 64 and raw.isascii() and raw.replace("_", "a").isalnum():
        return raw  # toolu_… / call_… ids, without the regex
    if _OPERATION_ID.fullmatch(raw):
        return raw
    return "x-" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def token_count(value: object) -> int:
    """A token count as written: the int itself when within 0..MAX_TOKENS, else 0."""
    return value if value.__class__ is int and 0 <= value <= MAX_TOKENS else 0


def digest(value: object) -> str | None:
    """sha256 of a tool call's arguments (a string as is, anything else as compact JSON)."""
    try:  # keys in the order the agent wrote them: the same call always digests the same
        raw = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):  # nested deeper than orjson writes
        return None
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def text_of(content: object) -> str:
    """The text of a message content: a string, or the `text` of its text blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [b["text"] for b in content
             if isinstance(b, dict) and isinstance(b.get("text"), str)
             and b.get("type") in ("text", "input_text", "output_text")]
    return "\n".join(parts)


def new_state() -> dict[str, Any]:
    """The state every translator starts from."""
    return {
        "seq": 0, "lines": 0, "first_ts": None, "last_ts": None,
        "damage": [], "damage_count": 0,
        "skipped": {}, "unrecognized": {}, "unmappable": {}, "unmappable_lines": [],
        "counts": {"messages": 0, "operations": 0, "file_changes": 0, "todos": 0,
                   "compactions": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0},
        "open_ops": {},  # operation_id -> seq it started at
        "rewound_lines": 0,
    }


class Translator:
    """Folds one agent file's lines into records; subclasses implement `feed` and `meta`."""

    agent: ClassVar[str]

    def __init__(self, file: AgentFile, state: dict[str, Any] | None = None) -> None:
        self.file = file
        self.state: dict[str, Any] = state if state is not None else self.initial_state()
        self.records: list[Record] = []
        self.tags: list[str | None] = []  # per record: the line uuid it came from (rewind filter)
        self.restart = False  # set when an incremental read cannot continue (re-read the file whole)

    def initial_state(self) -> dict[str, Any]:
        """The state of a file read from its start."""
        return new_state()

    # -- fed by the reader -------------------------------------------------------------------
    def feed(self, number: int, line: dict[str, Any]) -> None:
        """Fold one parsed JSON object (line `number`, 1-based)."""
        raise NotImplementedError

    def damaged(self, damage: LineDamage) -> None:
        """Note a bad line in the middle of the file."""
        self.state["damage_count"] += 1
        if len(self.state["damage"]) < DAMAGE_KEPT:
            self.state["damage"].append([damage.line, damage.kind, damage.detail])

    def unmappable(self, number: int, kind: str, exc: BaseException) -> None:
        """Note a parsed line whose shape this translator does not understand (skipped)."""
        self._count("unmappable", kind)
        if len(self.state["unmappable_lines"]) < DAMAGE_KEPT:
            self.state["unmappable_lines"].append([number, kind, repr(exc)[:200]])

    def finish(self) -> None:
        """End of a read (subclasses drop rewound records here, before the summary is taken)."""

    def account(self, records: list[Record]) -> None:
        """Count `records` into the counters and the open operations."""
        counts, open_ops = self.state["counts"], self.state["open_ops"]
        for record in records:
            kind = record["type"]
            if kind == "operation":
                if record["status"] == "started":
                    counts["operations"] += 1
                    open_ops[record["operation_id"]] = record["seq"]
                else:
                    open_ops.pop(record["operation_id"], None)
            elif kind == "cost":
                counts["input_tokens"] += record.get("input_tokens", 0)
                counts["output_tokens"] += record.get("output_tokens", 0)
                counts["usd"] = round(counts["usd"] + record.get("usd", 0.0), 9)
            elif kind in _COUNTED:
                counts[_COUNTED[kind]] += 1

    def meta(self) -> Record | None:
        """The synthesized session_meta (seq 0) as the file now stands; None without a thread id."""
        raise NotImplementedError

    def summary_fields(self) -> dict[str, Any]:
        """The SessionSummary fields only the agent knows: ids, cwd, branch, head, model, title, ..."""
        return {}

    def session_id_of(self, thread: str) -> str:
        """The derived session id of this file (computed once per thread id, kept in the state)."""
        cached = self.state.get("session_id")
        if not cached or cached[0] != thread:
            cached = self.state["session_id"] = [thread, derived_session_id(self.agent, thread,
                                                                            self.file.path.name)]
        return str(cached[1])

    def redacted(self, title: str | None) -> str | None:
        """A title with credentials redacted (once per title, kept in the state)."""
        if not title:
            return None
        cached = self.state.get("title_redacted")
        if not cached or cached[0] != title:
            cached = self.state["title_redacted"] = [title, redact_text(title)]
        return str(cached[1])

    # -- helpers for subclasses --------------------------------------------------------------
    def note_ts(self, ts: object) -> str | None:
        """Remember a line's timestamp (first and last); return it, or the last one seen."""
        if isinstance(ts, str) and ts:
            if self.state["first_ts"] is None:
                self.state["first_ts"] = ts
            self.state["last_ts"] = ts
            return ts
        return self.state["last_ts"]

    def emit(self, kind: str, ts: str | None, fields: Record, *, tag: str | None = None) -> Record:
        """Append one record of our vocabulary with the next seq, and count it."""
        st = self.state
        seq = st["seq"] + 1
        st["seq"] = seq
        fields["seq"], fields["ts"], fields["type"] = seq, ts or st["last_ts"] or "", kind
        self.records.append(fields)
        self.tags.append(tag)
        counts = st["counts"]
        if kind == "message":  # the common kinds inline; account() knows them all
            counts["messages"] += 1
        elif kind == "operation":
            if fields["status"] == "started":
                counts["operations"] += 1
                st["open_ops"][fields["operation_id"]] = seq
            else:
                st["open_ops"].pop(fields["operation_id"], None)
        elif kind == "cost":
            counts["input_tokens"] += fields.get("input_tokens", 0)
            counts["output_tokens"] += fields.get("output_tokens", 0)
            if fields.get("usd"):
                counts["usd"] = round(counts["usd"] + fields["usd"], 9)
        else:
            self.account([fields])
        return fields

    def skip(self, kind: str) -> None:
        """Count a line of a known type this translator deliberately does not map."""
        self._count("skipped", kind)

    def unknown(self, kind: str) -> None:
        """Count a line of a type this translator does not know (a newer format, most likely)."""
        self._count("unrecognized", kind)

    def _count(self, bucket: str, kind: str) -> None:
        table = self.state[bucket]
        table[kind] = table.get(kind, 0) + 1

    def keep_only(self, live: set[str]) -> dict[int, int]:
        """Drop records tagged with a line outside `live` (cost is always kept) and renumber.

        Seq stays contiguous and each `compacted.through_seq` is moved to the last kept record at
        or before it. Returns old seq -> new seq (a dropped record maps to the kept one before it).
        """
        base = self.records[0]["seq"] - 1 if self.records else self.state["seq"]
        kept: list[Record] = []
        new_of: dict[int, int] = {}
        last = base
        for record, tag in zip(self.records, self.tags, strict=True):
            if tag is None or tag in live or record["type"] == "cost":
                last += 1
                new_of[record["seq"]] = last
                record["seq"] = last
                kept.append(record)
            else:
                new_of[record["seq"]] = last
        for record in kept:
            if record["type"] == "compacted":
                record["through_seq"] = new_of.get(record["through_seq"], record["through_seq"])
        self.records, self.tags = kept, [None] * len(kept)
        self.state["seq"] = last
        # only a full read filters: its counters started at zero, so count the kept records again
        self.state["counts"], self.state["open_ops"] = new_state()["counts"], {}
        self.account(kept)
        return new_of
