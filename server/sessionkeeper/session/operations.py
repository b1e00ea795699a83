"""A session's operations: tool side effects recorded before they happen and reused after.

Invariants: an operation is keyed by `operation_id` and its arguments by `args_digest` (sha256 of
their canonical JSON, taken before redaction); `started` is durable before the side effect runs;
a re-delivered (operation_id, status) is acknowledged with its first seq and never written again,
one re-delivered with other arguments is an OperationConflict, and a final status after another
final status is an InvalidEvent. An operation started but never finished is `in_doubt`: for a
human, never run again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson

from .. import ids
from ..errors import InvalidEvent, OperationConflict
from ..events import Durability, Record
from ..recovery.subsystems.operations import Operations
from ..store.recorder import Ack

if TYPE_CHECKING:
    from ..recovery.state import SessionState
    from ..schema import Event
    from ..store.writer import SessionWriter


def args_digest(args: Any) -> str:
    """sha256 of the canonical JSON of tool arguments (taken before redaction)."""
    try:
        return hashlib.sha256(orjson.dumps(args, option=orjson.OPT_SORT_KEYS)).hexdigest()
    except TypeError as exc:  # orjson.JSONEncodeError: not JSON, too deep, beyond 64 bits
        raise InvalidEvent(f"args: not encodable as JSON ({exc})") from None


@dataclass(frozen=True)
class OperationTicket:
    """What to do about a tool call: run it, reuse a recorded result, or ask a human."""

    operation_id: str
    action: Literal["run", "reuse", "in_doubt"]
    result: Any = None
    seq: int | None = None


class OperationCalls:
    """Mixin of `Session`: begin and finish operations, and append batches holding operations
    (re-deliveries checked against the state and the batch)."""

    state: SessionState
    writer: SessionWriter

    if TYPE_CHECKING:  # provided by Session
        def record(self, event: Record | Event, *, durability: Durability | None = None) -> Ack: ...

        def _append(self, bodies: list[bytes], level: Durability) -> list[Ack]: ...

    def begin_operation(self, operation_id: str, tool: str, args: Any = None) -> OperationTicket:
        """Durably record `started` before a side effect; reuse or flag a known operation instead.

        Raises OperationConflict when the id is known with other arguments: nothing is reused.
        """
        entry = self.state.get(Operations).lookup(ids.operation_id(operation_id))
        if entry is not None:
            if args is not None:
                same_args({"operation_id": operation_id, "args_digest": args_digest(args)},
                          entry["args_digest"])
            if entry["status"] in ("committed", "failed"):
                return OperationTicket(operation_id, "reuse", entry.get("result"), entry["seq"])
            return OperationTicket(operation_id, "in_doubt", None, entry["started_seq"])
        event: Record = {"type": "operation", "operation_id": operation_id, "tool": tool,
                         "status": "started"}
        if args is not None:
            event["args"] = args
        ack = self.record(event, durability=Durability.DURABLE)
        if ack.duplicate:  # another caller started it a moment ago: it is theirs to run
            return OperationTicket(operation_id, "in_doubt", None, ack.seq)
        return OperationTicket(operation_id, "run", None, ack.seq)

    def finish_operation(self, operation_id: str, *, ok: bool = True, result: Any = None) -> Ack:
        """Durably record that an operation committed (or failed), with its result."""
        entry = self.state.get(Operations).entry(ids.operation_id(operation_id))
        tool = entry["tool"] if entry else "unknown"
        return self.record({"type": "operation", "operation_id": operation_id, "tool": tool,
                            "status": "committed" if ok else "failed",
                            "result_persisted": result is not None, "result": result},
                           durability=Durability.DURABLE)

    def _append_operations(self, prepared: list[tuple[str, bytes]],
                           level: Durability) -> list[Ack]:
        """Append a batch holding operations: a re-delivered one gets its first ack instead (at
        `level`: a first delivery still buffered is written out first), and a second final
        status of one operation in the batch is refused, as after a recorded one."""
        bodies: list[bytes] = []
        plan: list[tuple[str, Any, Any]] = []  # (how, ack or index, record of a duplicate)
        first_in_batch: dict[tuple[str, str], tuple[int, str | None]] = {}
        final: dict[str, str] = {}  # operation id -> the final status new in this batch
        for kind, body in prepared:
            if kind == "operation":
                record = orjson.loads(body)
                key = (record["operation_id"], record["status"])
                known = self._delivered(record)
                if known is not None:
                    plan.append(("known", known, record))
                    continue
                if key in first_in_batch:
                    index, digest = first_in_batch[key]
                    same_args(record, digest)
                    plan.append(("again", index, record))
                    continue
                if key[1] != "started" and final.setdefault(key[0], key[1]) != key[1]:
                    raise InvalidEvent(f"status: operation {key[0]} already {final[key[0]]}; "
                                       f"it cannot be {key[1]} too")
                first_in_batch[key] = (len(bodies), record.get("args_digest"))
            plan.append(("new", len(bodies), None))
            bodies.append(body)
        if bodies:
            written = self._append(bodies, level)  # buffered records are written first
        else:
            written = []
            if level is not Durability.NONE:  # a first delivery may still sit in the buffer
                self.writer.recorder.flush()
        out = []
        for how, ref, record in plan:
            if how == "new":
                out.append(written[ref])
                continue
            first = ref if how == "known" else written[ref]
            self.state.apply({**record, "seq": None})  # counted as a duplicate delivery
            out.append(Ack(first.seq, level, duplicate=True))
        return out

    def _check_transition(self, event: Record) -> None:
        """A final status after another final status is a contradiction, not a redelivery."""
        entry = self.state.get(Operations).entry(str(event["operation_id"]))
        status = event.get("status")
        if entry is None or status == "started" or status in entry["statuses"]:
            return
        if entry["status"] in ("committed", "failed"):
            raise InvalidEvent(f"status: operation {event['operation_id']} already "
                               f"{entry['status']}; it cannot be {status} too")

    def _delivered(self, record: Record) -> Ack | None:
        """The ack of an earlier delivery of the same (operation_id, status), if any."""
        entry = self.state.get(Operations).entry(record["operation_id"])
        if entry is None or record["status"] not in entry["statuses"]:
            return None
        same_args(record, entry["args_digest"])
        seq = entry["started_seq"] if record["status"] == "started" else entry["seq"]
        return Ack(seq, Durability.WRITTEN)


def same_args(record: Record, digest: str | None) -> None:
    """Raise OperationConflict when a re-delivered operation names other arguments."""
    given = record.get("args_digest")
    if given is not None and digest is not None and given != digest:
        raise OperationConflict(f"operation {record['operation_id']} was recorded with other "
                                "arguments; it is not the same operation (use a new operation id)")
