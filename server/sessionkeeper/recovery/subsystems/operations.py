"""The tool ledger by operation_id: a re-delivered record is a duplicate, never a second effect.

An operation is started, then committed or failed. One that started and never finished is *in
doubt*: reported for a human, never re-run here. A record repeating an (operation_id, status)
already seen is kept in `duplicates` and changes nothing else.

Invariants (issue 13): a ledger entry is never changed in place — an update replaces it — so a
snapshot and a restore share entries instead of deep-copying them; a result over INLINE_RESULT
bytes of JSON stays in the log only (`result_seq`) and `lookup` reads it back from there. The
snapshot is bounded by the work in progress, not the history: every unfinished operation and the
latest finished ones stay whole in the ledger (at most HOT entries, unless more are unfinished);
an older finished one leaves only its outcome's count and an 8-byte fingerprint of its id in the
`Archive` — the log holds it, and it is read back from there (`_revive`) the moment a record, a
lookup or a re-delivery names it again. Archiving depends only on the records folded, so a
replay from a snapshot and a replay of every record reach the same state.
"""

from __future__ import annotations

import copy
import hashlib
import sys
from array import array
from collections import Counter
from typing import Any

import orjson

from .base import Record, Subsystem, register

FINAL = ("committed", "failed")
INLINE_RESULT = 1024
HOT = 256  # ledger entries kept whole; beyond it the oldest finished ones go, down to HOT // 2
_OPERATIONS = frozenset({"operation"})


def fingerprint(operation_id: str) -> int:
    """An 8-byte digest of an operation id (blake2b): what the archive keeps of it."""
    return int.from_bytes(hashlib.blake2b(operation_id.encode(), digest_size=8).digest(), "little")


class Archive:
    """Finished operations that left the ledger: fingerprints of their ids (a multiset: two ids
    may share one), counts by outcome, and `through`, the seq up to which the log holds all
    their records."""

    def __init__(self, ids: str = "", *, committed: int = 0, failed: int = 0,
                 through: int = 0) -> None:
        self.committed, self.failed, self.through = committed, failed, through
        self._encoded: str | None = ids  # the state's form (decoded on first membership test)
        self._ids: Counter[int] | None = None if ids else Counter()

    @classmethod
    def from_state(cls, state: dict[str, Any] | None) -> Archive:
        """The archive a snapshot stored (none: empty, as older snapshots had it)."""
        if not state:
            return cls()
        return cls(state.get("ids", ""), committed=state.get("committed", 0),
                   failed=state.get("failed", 0), through=state.get("through", 0))

    def __contains__(self, operation_id: object) -> bool:
        return isinstance(operation_id, str) and self._set()[fingerprint(operation_id)] > 0

    def add(self, operation_id: str, status: str, *, seq: int | None) -> None:
        """Archive a finished operation (its records are in the log up to `seq`)."""
        self._set()[fingerprint(operation_id)] += 1
        self._encoded = None
        self._count(status, 1)
        if isinstance(seq, int):
            self.through = max(self.through, seq)

    def discard(self, operation_id: str, status: str) -> None:
        """Take an operation back out (it is whole in the ledger again)."""
        ids, key = self._set(), fingerprint(operation_id)
        if ids[key] > 1:
            ids[key] -= 1
        else:
            ids.pop(key, None)
        self._encoded = None
        self._count(status, -1)

    def state(self) -> dict[str, Any]:
        """The snapshot's form: the sorted fingerprints as base64 of little-endian uint64s."""
        if self._encoded is None:
            import base64

            packed = array("Q", sorted(self._set().elements()))
            if sys.byteorder == "big":  # pragma: no cover - the stored form is little-endian
                packed.byteswap()
            self._encoded = base64.b64encode(packed.tobytes()).decode("ascii")
        return {"ids": self._encoded, "committed": self.committed, "failed": self.failed,
                "through": self.through}

    def _set(self) -> Counter[int]:
        if self._ids is None:
            import base64

            packed = array("Q", base64.b64decode(self._encoded or ""))
            if sys.byteorder == "big":  # pragma: no cover
                packed.byteswap()
            self._ids = Counter(packed)
        return self._ids

    def _count(self, status: str, step: int) -> None:
        if status == "committed":
            self.committed += step
        elif status == "failed":
            self.failed += step


@register
class Operations(Subsystem):
    """operation_id -> {tool, status, args_digest, statuses, started_seq, seq, result...}."""

    name = "operations"
    handles = frozenset({"operation"})

    def __init__(self) -> None:
        self.ledger: dict[str, dict[str, Any]] = {}
        self.duplicates: list[dict[str, Any]] = []
        self.archive = Archive()

    def apply(self, record: Record) -> None:
        """Fold one operation record; a repeated (operation_id, status) is only a duplicate."""
        op_id, status, seq = record["operation_id"], record["status"], record.get("seq")
        entry = self.entry(op_id)
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
        if status in FINAL and len(self.ledger) > HOT:
            self._retire(seq)

    def _retire(self, seq: int | None) -> None:
        """Move the oldest finished entries to the archive until HOT // 2 entries stay whole."""
        excess = len(self.ledger) - HOT // 2
        done = [op_id for op_id, e in self.ledger.items() if e["status"] in FINAL][:excess]
        for op_id in done:
            self.archive.add(op_id, self.ledger.pop(op_id)["status"], seq=seq)

    def _revive(self, operation_id: str) -> dict[str, Any] | None:
        """Fold an archived operation's records from the log back into the ledger; None when
        the fingerprint was another operation's (then nothing changes)."""
        if self.log is None:
            raise LookupError(f"operation {operation_id} is in the log only: no log is attached")
        scratch = Operations()
        for record in self.log(-1, self.archive.through, _OPERATIONS):
            if record.get("operation_id") == operation_id:
                scratch.apply(record)
        entry = scratch.ledger.get(operation_id)
        if entry is not None:
            self.archive.discard(operation_id, entry["status"])
            self.ledger[operation_id] = entry
        return entry

    def snapshot(self) -> dict[str, Any]:
        """Return {"ledger": {...}, "duplicates": [...], "archive": {...}} (entries shared)."""
        return {"ledger": dict(self.ledger), "duplicates": list(self.duplicates),
                "archive": self.archive.state()}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot (entries taken as they are: never changed in place)."""
        self.ledger = dict(state.get("ledger", {}))
        self.duplicates = list(state.get("duplicates", []))
        self.archive = Archive.from_state(state.get("archive"))

    def entry(self, operation_id: str) -> dict[str, Any] | None:
        """An operation's ledger entry as it is (read-only; its result may be only in the log);
        an archived one is read back from the log first."""
        entry = self.ledger.get(operation_id)
        if entry is None and operation_id in self.archive:
            return self._revive(operation_id)
        return entry

    def lookup(self, operation_id: str) -> dict[str, Any] | None:
        """Return an operation's ledger entry (to reuse its result instead of re-running it)."""
        entry = self.entry(operation_id)
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
        old = self.archive
        return {"total": len(statuses) + old.committed + old.failed,
                "committed": statuses.count("committed") + old.committed,
                "failed": statuses.count("failed") + old.failed,
                "in_doubt": statuses.count("started"), "duplicates": len(self.duplicates)}

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
