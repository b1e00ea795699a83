"""A live, writable session of a thread, as an agent harness uses it in-process.

Invariants: records are validated, redacted and appended, then folded into the live state in seq
order under one lock (fsync waits happen outside it, so they are shared); an acknowledgement is
exactly true — a record is acknowledged once it reached its durability, and a failing automatic
snapshot after it never turns it into an error; a re-delivered operation is acknowledged with its
first seq and never written again, and one re-delivered with other arguments is a conflict.
Operations (begin, finish, re-deliveries) are `operations`' (mixin `OperationCalls`).
A file_change read at record time has its content in the blob store (fsynced) before it is written
(`recovery.file_capture`); records without file content do no blob work.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import orjson

from .. import ids
from ..errors import InvalidEvent, SessionKeeperError
from ..events import KEEPER_TYPES, Durability, Record, Source, own_body, plain
from ..policy import SessionPolicy
from ..recovery.baseline import capture
from ..recovery.lifecycle import HookRegistry, HookRun
from ..recovery.state import SessionState
from ..recovery.status import StatusSummary, status_summary
from ..redact import redact_json
from ..store.recorder import Ack
from .operations import OperationCalls, OperationTicket, args_digest

if TYPE_CHECKING:
    from ..recovery.content import Captured
    from ..schema import Event
    from ..store.reader import Rollout
    from ..store.writer import SessionWriter

__all__ = ["OperationTicket", "Session", "Transition", "args_digest"]

log = logging.getLogger("sessionkeeper.session")
_PARALLEL_FROM = 8  # events in one batch built here before their capture runs in threads
_CAPTURE_THREADS = 8
_DURABLE, _WRITTEN = Durability.DURABLE, Durability.WRITTEN  # module constants: no enum lookup
_COMPLETED = frozenset({"operation", "file_change", "baseline", "compacted"})  # see _completed


class Transition(NamedTuple):
    """A recorded lifecycle transition and what its hooks did."""

    ack: Ack
    hooks: HookRun


class Session(OperationCalls):
    """Records events for one run of a thread; folds them into the live state as it goes."""

    def __init__(self, writer: SessionWriter, state: SessionState, *, policy: SessionPolicy,
                 hooks: HookRegistry, on_close: Callable[[Session], None] | None = None,
                 workspace: str | None = None) -> None:
        self.writer = writer
        self._workspace = workspace  # the real path (the recorded cwd may be redacted)
        self.state = state
        self.policy = policy
        self.hooks = hooks
        self._on_close = on_close
        self.after_close: Callable[[Session], None] | None = None  # once its lock is released
        self._since_snapshot = 0  # bytes appended since the last snapshot
        self._snapshot_bytes = 0  # size of the last snapshot
        self._snapshot_due = policy.snapshot_min_bytes  # bytes after which the next one is due
        self._order = threading.RLock()  # append + fold in seq order

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

    @property
    def workspace(self) -> str:
        """The workspace the session runs in."""
        return self._workspace or str(self.writer.meta["cwd"])

    # ---- recording ------------------------------------------------------------------------------

    def record(self, event: Record | Event, *, durability: Durability | None = None) -> Ack:
        """Validate, redact and append one event; returns once `durability` is reached."""
        return self._write([self._body(event)], durability)[0]  # _record's path, for one event

    def record_many(self, events: list[Record | Event], *, durability: Durability | None = None,
                    redact: bool = True) -> list[Ack]:
        """Append events in order (one write); a re-delivered operation is acknowledged with the
        seq of its first delivery and counted as a duplicate, never written again.

        `redact=False`: the caller redacted the events' free text itself, and the rest (a
        framework's namespaces and channel names, hex payloads) must reach disk exactly."""
        if not redact:
            return self._write([self._body(event, redact=False) for event in events], durability)
        return self._record(events, durability=durability, own=False)

    def record_file(self, path: str, *, content: bytes | None = None, author: str = "agent",
                    seen: bool = False, durability: Durability | None = None,
                    built: bool = False) -> Ack:
        """Record a file version: `content`, else the file now; `seen`: its content before a change
        (`built`: `author` is one of the schema's, as `record_built` takes it)."""
        event: Record = {"type": "file_change", "path": path, "author": "external" if seen else author,
                         **({"change": "seen"} if seen else {})}
        return self._record([event], durability=durability, own=False, content=content,
                            built=built)[0]

    def record_captured(self, event: Record, captured: Captured, *,
                        durability: Durability | None = None) -> Ack:
        """Record a file_change built from checked values (as `record_built`) whose file a tool
        hook read at the time of the call: `captured` stands for the file now."""
        return self._record([event], durability=durability, own=False, content=captured,
                            built=True)[0]

    def record_built(self, events: list[Record | Event], *,
                     durability: Durability | None = None) -> list[Ack]:
        """Append events Session Keeper built itself from checked values (a tool hook's record of
        the agent's call): completed, checked against the thread and redacted like any, but not
        validated by pydantic, whose start a hook cannot wait for; tests hold them to the schema."""
        return self._record(events, durability=durability, own=False, built=True)

    def record_own(self, events: list[Record | Event], *,
                   durability: Durability | None = Durability.DURABLE) -> list[Ack]:
        """Append Session Keeper's own records (lifecycle, a rewind's file versions); no hooks run."""
        return self._record(events, durability=durability, own=True)

    def _record(self, events: list[Record | Event], *, durability: Durability | None,
                own: bool, content: bytes | Captured | None = None,
                built: bool = False) -> list[Ack]:
        return self._write(self._prepared(events, own=own, content=content, built=built),
                           durability)

    def _write(self, prepared: list[tuple[str, bytes]], durability: Durability | None) -> list[Ack]:
        """Append prepared bodies in seq order and fold them; a durable level is waited for
        outside the order lock (so fsyncs are shared)."""
        level = self.writer.recorder.default if durability is None else Durability(durability)
        with self._order:
            if len(prepared) == 1 and prepared[0][0] != "operation":  # record(): no loop, no
                out = self._append([prepared[0][1]], level)  # comprehension (0.3 us -> 0.1 us)
            elif any(kind == "operation" for kind, _body in prepared):  # a re-delivery is
                out = self._append_operations(prepared, level)  # acknowledged, never written again
            else:
                out = self._append([body for _kind, body in prepared], level)
        if level is _DURABLE:
            self.writer.recorder.sync()
        return out

    def _prepared(self, events: list[Record | Event], *, own: bool, content: bytes | Captured | None,
                  built: bool) -> list[tuple[str, bytes]]:
        """Every event checked and encoded before any is written; in a large batch that Session
        Keeper built (the files seen at start), the files to read are read and stored by a few
        threads, since each blob waits for its own fsyncs, and the rest encoded meanwhile."""
        if not built:
            return [self._body(event, own=own, content=content) for event in events]

        def body(event: Record | Event) -> tuple[str, bytes]:
            return self._body(event, own=own, content=content, built=built)

        reads = [i for i, event in enumerate(events) if _reads_file(event)]
        if len(reads) < _PARALLEL_FROM:
            return [body(event) for event in events]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=_CAPTURE_THREADS) as pool:  # reads in the threads,
            pending = {i: pool.submit(body, events[i]) for i in reads}  # the rest meanwhile here
            done = [None if i in pending else body(event) for i, event in enumerate(events)]
            return [pending[i].result() if b is None else b for i, b in enumerate(done)]

    def _body(self, event: Record | Event, *, own: bool = False,
              content: bytes | Captured | None = None,
              built: bool = False, redact: bool = True) -> tuple[str, bytes]:
        """(type, the encoded and redacted body); Session Keeper's own record types are refused
        (`built`: made by Session Keeper from checked values, so encoded without validation)."""
        schema_record = not isinstance(event, dict) and _is_event(event)
        data: Record = plain(event) if schema_record else cast("Record", event)
        kind = data.get("type") if isinstance(data, dict) else None
        if isinstance(kind, str) and kind.__class__ is not str:  # a str Enum, a crafted string:
            kind = str.__str__(kind)  # the text orjson writes, as every check below sees it
            data = {**data, "type": kind}
        if isinstance(kind, str):  # then `data` is a dict; any other type is refused by validation
            if kind in KEEPER_TYPES and not own:
                raise InvalidEvent(f"type: {kind!r} records are written by Session Keeper itself")
            if kind in _COMPLETED:
                data = self._completed(kind, data, content=content, own=own)
        # one built here was checked by its dataclass; what arrives is validated (pydantic)
        body = own_body(data) if built or (own and schema_record) else _validated(data)
        return str(kind), redact_json(body) if redact and self.policy.redact else body

    def _completed(self, kind: object, event: Record, *, content: bytes | Captured | None = None,
                   own: bool = False) -> Record:
        """An event with what the contract needs filled in or checked against the thread."""
        if kind == "operation":
            ids.operation_id(event.get("operation_id"))
            if "args" in event and "args_digest" not in event:
                event = {**event, "args_digest": args_digest(event["args"])}
            self._check_transition(event)
        elif kind == "file_change" and isinstance(event.get("path"), str):
            from ..recovery import file_capture  # blobs, git: only for file changes

            event = {**event, "path": self._workspace_path(event["path"])}
            event = file_capture.complete(event, self, content=content, own=own)
        elif kind == "baseline" and set(event) == {"type"}:
            event = {**event, **self._baseline_now()}
        elif kind == "compacted" and isinstance(event.get("through_seq"), int) \
                and event["through_seq"] > self.writer.last_seq:
            raise InvalidEvent(f"through_seq: {event['through_seq']} lies beyond the thread "
                               f"(last seq {self.writer.last_seq})")
        return event

    def see_workspace(self) -> list[Ack]:
        """Record as `seen` the files differing from the baseline commit, as the thread lacks them."""
        from ..recovery import file_capture

        events = file_capture.scan(self)  # built from git's answers and the files: no validation
        return self._record(list(events), durability=None, own=False, built=True) if events else []

    def _baseline_now(self) -> Record:
        """The workspace's baseline now (a `baseline` record without fields means: capture it)."""
        now = capture(self.workspace)
        if now is None:
            raise InvalidEvent(f"baseline: {self.workspace} is not inside a git repository")
        return dict(plain(now))

    def _workspace_path(self, path: str) -> str:
        """A file path as file history keys it: relative to the workspace, with `/` (a `\\` is a
        separator too, as `file_history.norm_path` takes it)."""
        path = path.replace("\\", "/")
        if not os.path.isabs(path) and os.path.normpath(path) == path and path != ".." \
                and not path.startswith(".." + os.sep):  # already relative and normal (git's)
            return path.replace(os.sep, "/")
        root = self.workspace
        full = os.path.normpath(os.path.join(root, path))
        if os.path.isabs(path):  # the editor may name it through a symlinked workspace path
            full = os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full))
        if os.path.commonpath([root, full]) != root:
            raise InvalidEvent(f"path: {path!r} lies outside the workspace {root}")
        return os.path.relpath(full, root).replace(os.sep, "/")

    def _append(self, bodies: list[bytes], level: Durability) -> list[Ack]:
        """Write bodies (a durable level is waited for after the lock), fold them in, and
        snapshot once enough bytes came since the last snapshot."""
        if level is _DURABLE:
            acks = [Ack(a.seq, level, a.duplicate) for a in self.writer.append(bodies, _WRITTEN)]
        else:
            acks = self.writer.append(bodies, level)
        apply, loads = self.state.apply, orjson.loads
        for body, ack in zip(bodies, acks, strict=True):
            record = loads(body)
            record["seq"] = ack[0]
            apply(record)
            self._since_snapshot += len(body)
        if self._since_snapshot >= self._snapshot_due:
            try:
                self._snapshot_locked()
            except SessionKeeperError as exc:  # the records are written: their acks stand
                log.warning("automatic snapshot of %s failed (retried later): %s",
                            self.session_id, exc)
        return acks

    def refresh_baseline(self) -> Ack:
        """Record the workspace's git baseline as it is now (after the agent moved HEAD)."""
        return self.record({"type": "baseline"}, durability=Durability.DURABLE)

    # ---- lifecycle ----------------------------------------------------------------------------

    def transition(self, source: Source, reason: str, *, decision: str | None = None,
                   context: Record | None = None) -> Transition:
        """Record a lifecycle event durably, then fire the hooks for `source` (failures isolated)."""
        from ..schema import Lifecycle

        ack = self._record([Lifecycle(source=source, reason=reason, decision=decision)],
                           durability=Durability.DURABLE, own=True)[0]
        run = self.hooks.run(source, {"thread_id": self.thread_id, "session_id": self.session_id,
                                      "workspace": self.workspace, **(context or {})})
        if run.failures:
            note = Lifecycle(source=source, reason="hook failures",
                             data={"hook_failures": run.failures, "of_seq": ack.seq})
            self._record([note], durability=None, own=True)
        return Transition(ack, run)

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
        changed = state["summary"] != self.writer.summary  # what a listing shows: refresh it now
        self.writer.summary = dict(state["summary"])
        recorder = self.writer.recorder
        recorder.flush()  # buffered records first: the prefix the snapshot vouches for is on disk
        body = own_body({"type": "snapshot", "through_seq": self.writer.last_seq, "state": state,
                           "prefix_bytes": recorder.size, "prefix_crc": f"{recorder.crc:08x}"})
        self._snapshot_bytes = len(body)
        self._snapshot_due = max(2 * len(body), self.policy.snapshot_min_bytes)
        ack = self.writer.append([body], reindex=changed)[0]
        self.state.through_seq = ack.seq
        return ack

    def carry_snapshot_budget(self, rollout: Rollout) -> None:
        """Continue the snapshot policy of a re-attached session from what its rollout holds."""
        if rollout.from_snapshot and rollout.records:
            self._snapshot_bytes = len(orjson.dumps(rollout.records[0]))
            self._snapshot_due = max(2 * self._snapshot_bytes, self.policy.snapshot_min_bytes)
            self._since_snapshot = sum(len(orjson.dumps(r)) for r in rollout.records[1:])

    def clear(self, reason: str = "") -> Ack:
        """Drop the conversation context; cost, model, permissions and the file stay."""
        return self.transition("clear", reason).ack

    def compact(self, summary: str) -> Ack:
        """Record a summary replacing the conversation so far (history stays in the log)."""
        self.transition("compact", "")
        return self.record({"type": "compacted", "summary": summary,
                            "through_seq": self.writer.last_seq})

    def exclusive(self) -> threading.RLock:
        """The lock records are appended and folded under: hold it to keep others from recording."""
        return self._order

    def summary(self) -> StatusSummary:
        """What a status bar or a listing shows about this session."""
        return status_summary(self.state, self.writer.meta)

    def flush(self) -> None:
        """Write out buffered (`none`) records and refresh this session's index row."""
        with self._order:
            self.writer.recorder.flush()
            self.writer.update_index()

    def close(self) -> None:
        """Snapshot (when enough was written since the last one), flush, fsync, release the thread."""
        if self._on_close is not None:
            self._on_close(self)
        try:
            if self.writer.recorder.read_only_reason is None:
                if self._since_snapshot and self._since_snapshot >= self._snapshot_bytes:
                    self.snapshot()
                else:
                    self.writer.summary = dict(self.summary())
        except SessionKeeperError as exc:  # the records are written: the snapshot only saves time
            log.warning("snapshot of %s at close failed (the next read replays the tail): %s",
                        self.session_id, exc)
        finally:
            self.writer.close()
            if self.after_close is not None:
                self.after_close(self)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_event_body: Callable[[Any], bytes] | None = None


def _is_event(value: object) -> bool:
    """True for a schema record (loaded only then: a tool hook records plain dicts only)."""
    from ..schema import Event

    return isinstance(value, Event)


def _reads_file(event: Record | Event) -> bool:
    """True for a file change whose completion reads the file now (no after_hash, not deleted)."""
    return isinstance(event, dict) and event.get("type") == "file_change" \
        and "after_hash" not in event and not event.get("deleted")


def _validated(data: Any) -> bytes:
    """validate.event_body, imported (pydantic with it) when the first record arrives."""
    global _event_body
    if _event_body is None:
        from .validate import event_body

        _event_body = event_body
    return _event_body(data)
