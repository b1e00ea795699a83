"""A live, writable session of a thread, as an agent harness uses it in-process."""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from .errors import InvalidEvent
from .events import Durability, Event, event_body
from .ids import operation_id as valid_operation_id
from .redact import redact_json
from .store.recorder import Ack

if TYPE_CHECKING:
    from .api import Keeper
    from .recovery.state import SessionState
    from .store.store import SessionWriter


_OWN_TYPES = frozenset({"session_meta", "snapshot", "lifecycle"})


def args_digest(args: Any) -> str:
    """sha256 of the canonical JSON of tool arguments (taken before redaction)."""
    return hashlib.sha256(orjson.dumps(args, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True)
class OperationTicket:
    """What to do about a tool call: run it, reuse a recorded result, or ask a human."""

    operation_id: str
    action: str  # "run" | "reuse" | "in_doubt"
    result: Any = None
    seq: int | None = None


class Session:
    """Records events for one run of a thread; folds them into the live state as it goes."""

    def __init__(self, keeper: Keeper, writer: SessionWriter, state: SessionState) -> None:
        self.keeper = keeper
        self.writer = writer
        self.state = state
        self._since_snapshot = 0  # bytes appended since the last snapshot
        self._snapshot_bytes = 0  # size of the last snapshot
        # Appending and folding happen under one lock, so the state folds records in seq order
        # even when several threads record at once; fsync waits happen outside it (group commit).
        self._order = threading.RLock()

    @property
    def thread_id(self) -> str:
        """The thread's stable id."""
        return self.writer.thread_id

    @property
    def session_id(self) -> str:
        """This run's id."""
        return self.writer.session_id

    @property
    def path(self) -> str:
        """The rollout file of this session."""
        return str(self.writer.path)

    def record(self, event: dict[str, Any] | Event, *, durability: Durability | None = None) -> Ack:
        """Validate, redact and append one event; returns once `durability` is reached."""
        return self.record_many([event], durability=durability)[0]

    def record_own(self, event: Event, *, durability: Durability | None = None) -> Ack:
        """Record one of Session Keeper's own records (a lifecycle transition); Keeper only."""
        return self.record_many([event], durability=durability, own=True)[0]

    def record_many(self, events: list[dict[str, Any] | Event], *,
                    durability: Durability | None = None, own: bool = False) -> list[Ack]:
        """Append events in order (one write); a re-delivered operation is acknowledged with the
        seq of its first delivery and counted as a duplicate, never written again."""
        prepared = [self._body(event, own=own) for event in events]  # validate all, then write
        level = self.writer.recorder.default if durability is None else Durability(durability)
        with self._order:
            out = self._append_and_fold(prepared, level)
        if level is Durability.DURABLE:
            self.writer.recorder.sync()
        return out

    def _append_and_fold(self, prepared: list[tuple[str, bytes]], level: Durability) -> list[Ack]:
        bodies: list[bytes] = []
        plan: list[tuple[str, Any, Any]] = []  # (how, ack or index, record of a duplicate)
        first_in_batch: dict[tuple[str, str], int] = {}
        for kind, body in prepared:
            if kind == "operation":
                record = orjson.loads(body)
                key = (record["operation_id"], record["status"])
                known = self._delivered(record)
                if known is not None:
                    plan.append(("known", known, record))
                    continue
                if key in first_in_batch:
                    plan.append(("again", first_in_batch[key], record))
                    continue
                first_in_batch[key] = len(bodies)
            plan.append(("new", len(bodies), None))
            bodies.append(body)
        lazy = Durability.WRITTEN if level is Durability.DURABLE else level
        written = [a._replace(durability=level)
                   for a in self.writer.append(bodies, lazy)] if bodies else []
        self._fold(bodies, written)
        out = []
        for how, ref, record in plan:
            if how == "new":
                out.append(written[ref])
                continue
            first = ref if how == "known" else written[ref]
            self.state.apply({**record, "seq": None})  # counted as a duplicate delivery
            out.append(Ack(first.seq, first.durability, duplicate=True))
        return out

    def _body(self, event: dict[str, Any] | Event, *, own: bool = False) -> tuple[str, bytes]:
        """(type, the encoded and redacted body); the server's own record types are refused."""
        kind = event.get("type") if isinstance(event, dict) else getattr(event, "type", None)
        if isinstance(kind, str) and kind in _OWN_TYPES and not own:
            raise InvalidEvent(f"type: {kind!r} records are written by Session Keeper itself")
        if isinstance(event, dict) and kind == "operation":
            if "args" in event and "args_digest" not in event:
                event = {**event, "args_digest": args_digest(event["args"])}
            valid_operation_id(event.get("operation_id"))
        if isinstance(event, dict) and kind == "file_change" and isinstance(event.get("path"), str):
            event = {**event, "path": self._workspace_path(event["path"])}
        body = event_body(event)
        return kind, redact_json(body) if self.keeper.redact else body

    def _workspace_path(self, path: str) -> str:
        """A file path as file history keys it: relative to the workspace, with `/`."""
        root = self.writer.meta["cwd"]
        full = os.path.normpath(os.path.join(root, path))
        if os.path.commonpath([root, full]) != root:
            raise InvalidEvent(f"path: {path!r} lies outside the workspace {root}")
        return os.path.relpath(full, root).replace(os.sep, "/")

    def _delivered(self, record: dict[str, Any]) -> Ack | None:
        """The ack of an earlier delivery of the same (operation_id, status), if any."""
        entry = self.state["operations"].lookup(record["operation_id"])
        if entry is None or record["status"] not in entry["statuses"]:
            return None
        seq = entry["started_seq"] if record["status"] == "started" else entry["seq"]
        return Ack(seq, Durability.WRITTEN)

    def _fold(self, bodies: list[bytes], acks: list[Ack]) -> None:
        for body, ack in zip(bodies, acks, strict=True):
            record = orjson.loads(body)
            record["seq"] = ack.seq
            self.state.apply(record)
        self._since_snapshot += sum(map(len, bodies))
        if self._since_snapshot >= max(2 * self._snapshot_bytes, self.keeper.snapshot_min_bytes):
            self._snapshot_locked()

    # ---- operations: record before the side effect, reuse after ----------------------------------

    def begin_operation(self, operation_id: str, tool: str, args: Any = None) -> OperationTicket:
        """Durably record `started` before a side effect; reuse or flag a known operation instead."""
        entry = self.state["operations"].lookup(valid_operation_id(operation_id))
        if entry is not None:
            if entry["status"] in ("committed", "failed"):
                return OperationTicket(operation_id, "reuse", entry.get("result"), entry["seq"])
            return OperationTicket(operation_id, "in_doubt", None, entry["started_seq"])
        event = {"type": "operation", "operation_id": operation_id, "tool": tool,
                 "status": "started"}
        if args is not None:
            event["args"] = args
        ack = self.record(event, durability=Durability.DURABLE)
        if ack.duplicate:  # another caller started it a moment ago: it is theirs to run
            return OperationTicket(operation_id, "in_doubt", None, ack.seq)
        return OperationTicket(operation_id, "run", None, ack.seq)

    def finish_operation(self, operation_id: str, *, ok: bool = True, result: Any = None) -> Ack:
        """Durably record that an operation committed (or failed), with its result."""
        entry = self.state["operations"].lookup(valid_operation_id(operation_id))
        tool = entry["tool"] if entry else "unknown"
        return self.record({"type": "operation", "operation_id": operation_id, "tool": tool,
                            "status": "committed" if ok else "failed",
                            "result_persisted": result is not None, "result": result},
                           durability=Durability.DURABLE)

    def refresh_baseline(self) -> Ack:
        """Record the workspace's git baseline as it is now (after the agent moved HEAD)."""
        from .recovery.baseline import capture

        now = capture(self.writer.meta["cwd"])
        event = {"type": "baseline", **(now.model_dump(mode="json") if now else {})}
        return self.record(event, durability=Durability.DURABLE)

    # ---- lifecycle ----------------------------------------------------------------------------

    def snapshot(self) -> Ack:
        """Write the folded state of every subsystem, so the next read starts here.

        Automatic snapshots come only after twice as many bytes as the previous snapshot held:
        with a bounded state (compacted context) snapshots add at most half the events' bytes, and
        even an ever-growing context costs at most 1.5x more, never a quadratic blow-up.
        """
        with self._order:
            return self._snapshot_locked()

    def _snapshot_locked(self) -> Ack:
        self._since_snapshot = 0
        state = {"subsystems": self.state.snapshot(), "summary": self.summary()}
        self.writer.summary = state["summary"]
        recorder = self.writer.recorder
        recorder.flush()  # buffered records first: the prefix the snapshot vouches for is on disk
        body = event_body({"type": "snapshot", "through_seq": self.writer.last_seq, "state": state,
                           "prefix_bytes": recorder.size, "prefix_crc": f"{recorder.crc:08x}"})
        self._snapshot_bytes = len(body)
        ack = self.writer.append([body], reindex=True)[0]
        self.state.through_seq = ack.seq
        return ack

    def carry_snapshot_budget(self, rollout: Any) -> None:
        """Continue the snapshot policy of a re-attached session from what its rollout holds."""
        if rollout.from_snapshot and rollout.records:
            self._snapshot_bytes = len(orjson.dumps(rollout.records[0]))
            self._since_snapshot = sum(len(orjson.dumps(r)) for r in rollout.records[1:])

    def clear(self, reason: str = "") -> Ack:
        """Drop the conversation context; cost, model, permissions and the file stay."""
        return self.keeper.transition(self, "clear", reason)

    def compact(self, summary: str) -> Ack:
        """Record a summary replacing the conversation so far (history stays in the log)."""
        self.keeper.transition(self, "compact", "")
        return self.record({"type": "compacted", "summary": summary,
                            "through_seq": self.writer.last_seq})

    def summary(self) -> dict[str, Any]:
        """What a status bar or a listing shows about this session."""
        return self.keeper.summary_of(self.state, self.writer.meta)

    def flush(self) -> None:
        """Write out buffered (`none`) records and refresh this session's index row."""
        with self._order:
            self.writer.recorder.flush()
            self.writer.update_index()

    def close(self) -> None:
        """Snapshot (when enough was written since the last one), flush, fsync, release the thread."""
        if self.keeper.live.get(self.thread_id) is self:
            del self.keeper.live[self.thread_id]
        if self.writer.recorder.read_only_reason is None:
            if self._since_snapshot and self._since_snapshot >= self._snapshot_bytes:
                self.snapshot()
            else:
                self.writer.summary = self.summary()
        self.writer.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
