"""The tool ledger by operation_id: a re-delivered record is a duplicate, never a second effect.

An operation is started, then committed or failed. One that started and never finished is *in
doubt*: reported for a human, never re-run here. A record repeating an (operation_id, status)
already seen is kept in `duplicates` and changes nothing else.

Invariants (issue 13): a ledger entry is never changed in place — an update replaces it — so a
snapshot and a restore share entries instead of deep-copying them; a result over INLINE_RESULT
bytes of JSON stays in the log only (`result_seq`) and `lookup` reads it back from there.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from .base import Record, Subsystem, register

FINAL = ("committed", "failed")
INLINE_RESULT = 1024


@register
class Operations(Subsystem):
    """operation_id -> {tool, status, args_digest, statuses, started_seq, seq, result...}."""

    name = "operations"
    handles = frozenset({"operation"})

    def __init__(self) -> None:
        self.ledger: dict[str, dict[str, Any]] = {}
        self.duplicates: list[dict[str, Any]] = []

    def apply(self, record: Record) -> None:
        """Fold one operation record; a repeated (operation_id, status) is only a duplicate."""
        op_id, status, seq = record["operation_id"], record["status"], record.get("seq")
        entry = self.ledger.get(op_id)
        if entry is not None and status in entry["statuses"]:
            same = record.get("args_digest") == entry["args_digest"]
            self.duplicates.append({"operation_id": op_id, "status": status, "seq": seq,
                                    "tool": record.get("tool"), "identical": same})
            return
        if entry is None:
            entry = {"tool": record["tool"], "status": status, "args_digest": None,
                     "statuses": [], "started_seq": None, "seq": seq, "result_persisted": False,
                     "result": None}
        entry = {**entry, "statuses": [*entry["statuses"], status], "seq": seq,
                 "args_digest": entry["args_digest"] or record.get("args_digest")}
        if status == "started":
            entry["started_seq"] = seq
        if status in FINAL or entry["status"] not in FINAL:  # a late "started" never reopens one
            entry["status"] = status
        if status in FINAL:
            entry["result_persisted"] = record.get("result_persisted", False)
            entry.pop("result_seq", None)
            result = record.get("result")
            if result is not None and len(orjson.dumps(result)) > INLINE_RESULT \
                    and isinstance(seq, int):
                entry["result"], entry["result_seq"] = None, seq  # the log holds it
            else:
                entry["result"] = copy.deepcopy(result)
        self.ledger[op_id] = entry

    def snapshot(self) -> dict[str, Any]:
        """Return {"ledger": {...}, "duplicates": [...]} (entries shared: never changed in place)."""
        return {"ledger": dict(self.ledger), "duplicates": list(self.duplicates)}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot (entries taken as they are: never changed in place)."""
        self.ledger = dict(state.get("ledger", {}))
        self.duplicates = list(state.get("duplicates", []))

    def entry(self, operation_id: str) -> dict[str, Any] | None:
        """An operation's ledger entry as it is (read-only; its result may be only in the log)."""
        return self.ledger.get(operation_id)

    def lookup(self, operation_id: str) -> dict[str, Any] | None:
        """Return an operation's ledger entry (to reuse its result instead of re-running it)."""
        entry = self.ledger.get(operation_id)
        if entry is None:
            return None
        entry = copy.deepcopy(entry)
        seq = entry.pop("result_seq", None)
        if seq is not None:
            entry["result"] = self._result_at(seq)
        return entry

    def _result_at(self, seq: int) -> Any:
        if self.log is None:
            raise LookupError(f"the result of seq {seq} is in the log: no log is attached")
        for record in self.log(seq - 1, seq, frozenset({"operation"})):
            return record.get("result")
        raise LookupError(f"operation record {seq} is not in the thread's log")

    def in_doubt(self) -> list[dict[str, Any]]:
        """Return operations started but never committed or failed: {operation_id, tool, seq}."""
        return [{"operation_id": op_id, "tool": e["tool"], "seq": e["started_seq"]}
                for op_id, e in self.ledger.items() if e["status"] == "started"]

    def counts(self) -> dict[str, int]:
        """Return how many operations are committed, failed, in doubt, and the duplicates."""
        statuses = [e["status"] for e in self.ledger.values()]
        return {"total": len(statuses), "committed": statuses.count("committed"),
                "failed": statuses.count("failed"), "in_doubt": statuses.count("started"),
                "duplicates": len(self.duplicates)}

    def summary(self) -> dict[str, Any]:
        """Return the counts, the in-doubt operations and the duplicates."""
        return {**self.counts(), "in_doubt_operations": self.in_doubt(),
                "duplicate_deliveries": copy.deepcopy(self.duplicates)}

    def headline(self) -> str:
        """Operations by outcome, in doubt first."""
        c = self.counts()
        if not c["total"]:
            return "none recorded"
        doubt = f"{c['in_doubt']} in doubt, " if c["in_doubt"] else ""
        return f"{doubt}{c['committed']} committed, {c['failed']} failed"
