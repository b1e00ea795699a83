"""LangGraph checkpointer on Session Keeper: `SessionKeeperSaver` (a `BaseCheckpointSaver`).

    saver = SessionKeeperSaver("/path/to/store", workspace="/path/to/repo")
    graph = builder.compile(checkpointer=saver)

A LangGraph thread is one Session Keeper thread (`session_thread_id`: a uuid5 of its thread_id,
agent `langgraph`), listed, resumed and checked like any other (`sessionkeeper --check-resume`);
its checkpoint namespaces live inside it. Given a workspace (constructor or
`configurable["workspace"]`), the thread records its git baseline, and a later process continues
it only through a resume check (drift raises ResumeRefused unless `on_drift="continue"`).

Invariants:
- every record of a LangGraph thread goes to that thread's one log in call order, so durability is
  a prefix: a checkpoint is never durable while a write recorded before it is not; and `put` first
  waits for the `put_writes` calls on the same thread already under way (LangGraph runs them on
  other threads, langgraph #8039), so the writes a checkpoint supersedes are ahead of it in the log;
- `put_writes` is idempotent per (task_id, idx): a repeated regular write is not recorded again,
  a special one (ERROR, INTERRUPT, ...) replaces the earlier one;
- a channel's value is stored only when its version is new to the namespace; other channels are
  carried from the namespace's previous checkpoint, which is what folding the log rebuilds;
- the newest checkpoint per namespace comes from the `checkpoints` subsystem (the live session's
  state, or snapshot + tail); an older one, `list` and the extended operations fold the log;
- names reach disk exactly (a node `fetch_token` makes a namespace `fetch_token:<task id>` that
  reads like a credential assignment): the saver redacts only the thread id and the metadata
  (not its `parents`, a map of namespaces to checkpoint ids), and records with `redact=False`.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from ..api import Keeper
from ..errors import InvalidEvent, InvalidId, InvalidWorkspace, ResumeRefused
from ..events import Durability, Record
from ..recovery.report import Decision, Report
from ..recovery.subsystems.checkpoints import MISSING, Checkpoints, Entry, History
from ..redact import redact_text, redact_value
from ..schema import Event
from ..session.live import Session
from ..store.blobs import BlobStore
from ..store.index import ThreadRow
from .graph_async import ThreadedAsync
from .graph_ops import UnderWay, graph_threads, removal_records, restated_records
from .graph_reads import GraphLog
from .live import LiveThreads, framework_thread_id, keeper_of
from .payloads import EMPTY, INLINE_LIMIT, Payload, Payloads

AGENT = "langgraph"


def session_thread_id(thread_id: str) -> str:
    """The Session Keeper thread id of a LangGraph thread_id (what `sessionkeeper list` shows)."""
    return framework_thread_id(AGENT, str(thread_id))


def _redacted(record: Record) -> Record:
    """A record of the saver with its free text redacted: the thread id and the metadata but
    its `parents` (namespaces and ids are names, payloads hex: nothing else may hold a secret)."""
    out = {**record, "thread": redact_text(record["thread"])}
    if "metadata" in record:
        metadata = dict(record["metadata"])
        parents = metadata.pop("parents", None)
        out["metadata"] = {**redact_value(metadata),
                           **({"parents": parents} if parents is not None else {})}
    return out


def _keys(config: RunnableConfig) -> tuple[str, str, str | None]:
    """(thread_id, checkpoint_ns, checkpoint_id) of a config, checked."""
    conf = config.get("configurable") or {}
    thread = conf.get("thread_id")
    if thread is None or isinstance(thread, bool) or not isinstance(thread, (str, int)):
        raise InvalidId(f"configurable.thread_id must be a string, not {thread!r}")
    ns = conf.get("checkpoint_ns") or ""
    checkpoint_id = conf.get("checkpoint_id")
    if not isinstance(ns, str) or not isinstance(checkpoint_id, (str, type(None))):
        raise InvalidId("configurable.checkpoint_ns and checkpoint_id must be strings")
    return str(thread), ns, checkpoint_id


class SessionKeeperSaver(ThreadedAsync):
    """Checkpoints, pending writes and metadata of LangGraph threads, in a Session Keeper store."""

    def __init__(self, store: Keeper | Path | str | None = None, *,
                 workspace: str | os.PathLike[str] | None = None,
                 durability: Durability | str | None = None,
                 on_drift: Literal["refuse", "continue"] = "refuse",
                 serde: SerializerProtocol | None = None, max_open: int = 64,
                 inline_limit: int = INLINE_LIMIT) -> None:
        super().__init__(serde=serde)
        self.keeper = keeper_of(store)
        self.owns_keeper = self.keeper is not store  # made here from a path: closed with the saver
        self.workspace = os.fspath(workspace) if workspace is not None else None
        self.durability = Durability(durability or self.keeper.durability)
        self.on_drift = on_drift
        self.live = LiveThreads(self.keeper, max_open=max_open)
        self.payloads = Payloads(self.serde, BlobStore(self.keeper.store.layout.root),
                                 inline_limit=inline_limit)
        self._under_way = UnderWay()
        self.log = GraphLog(self.keeper, self.live, self.payloads, serde=self.serde,
                            durability=self.durability)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> SessionKeeperSaver:
        """A clone whose serializer also decodes `extra_allowlist` (LangGraph's strict msgpack
        mode asks for one at compile); it shares this saver's store, open threads and locks."""
        clone = cast(SessionKeeperSaver, super().with_allowlist(extra_allowlist))
        if clone is not self:  # values are encoded and decoded by the clone's own serializer
            clone.payloads = Payloads(clone.serde, self.payloads.blobs,
                                      inline_limit=self.payloads.inline_limit)
            clone.log = GraphLog(self.keeper, self.live, clone.payloads, serde=clone.serde,
                                 durability=self.durability)
        return clone

    # ---- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Close every session this saver holds open (snapshot, fsync, release the threads), and
        the Keeper it made (`owns_keeper`; one given stays the caller's to close)."""
        self.live.close_all()
        if self.owns_keeper:
            self.keeper.close()

    def __enter__(self) -> SessionKeeperSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check_resume(self, thread_id: str, *, workspace: str | None = None) -> Report:
        """The resume check of a LangGraph thread against `workspace` (default: the recorded one)."""
        sk = session_thread_id(thread_id)
        row = self.keeper.store.thread_row(sk)
        where = workspace or self.workspace or (row.cwd if row else None) or os.getcwd()
        return self.keeper.check_resume(sk, workspace=where)

    # ---- writing ----------------------------------------------------------------------------

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        """Record a checkpoint, storing only the channel values whose version is new."""
        thread, ns, parent = _keys(config)
        sk = session_thread_id(thread)
        self._under_way.wait(sk)  # writes handed to us before this checkpoint go first
        with self.live.lock(sk):
            session = self._session(sk, thread, config)
            previous = session.state.get(Checkpoints).newest(ns)
            record = self._checkpoint_record(thread, ns, parent, checkpoint,
                                             get_serializable_checkpoint_metadata(config, metadata),
                                             new_versions, previous)
            self._record(session, [record])
        return {"configurable": {"thread_id": config["configurable"]["thread_id"],
                                 "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        """Record a task's writes against a checkpoint, once per (task_id, idx)."""
        sk = session_thread_id(_keys(config)[0])
        self._under_way.enter(sk)
        try:
            self._put_writes(config, writes, task_id, task_path)
        finally:
            self._under_way.leave(sk)

    def _put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                    task_path: str) -> None:
        thread, ns, checkpoint_id = _keys(config)
        if checkpoint_id is None:
            raise InvalidId("put_writes needs configurable.checkpoint_id")
        sk = session_thread_id(thread)
        # serialized before the thread's lock is taken (large values are fsynced blobs): a put
        # arriving meanwhile waits for this call (UnderWay), not for the lock alone
        encoded: list[tuple[int, str, Payload]] = [
            (WRITES_IDX_MAP.get(channel, idx), channel, self.payloads.encode(value))
            for idx, (channel, value) in enumerate(writes)]
        with self.live.lock(sk):
            session = self._session(sk, thread, config)
            entry = session.state.get(Checkpoints).newest(ns)
            if entry is None or entry["id"] != checkpoint_id:  # an older checkpoint: rare
                entry = self.log.history(sk).namespaces.get(ns, {}).get(checkpoint_id)
            known = {(w[0], w[1]) for w in entry["writes"]} if entry else set()
            # a re-delivered regular write is dropped (the first stands); special ones replace
            rows = [list(row) for row in encoded
                    if row[0] < 0 or (str(task_id), row[0]) not in known]
            if rows:
                self._record(session, [{"type": "checkpoint_writes", "thread": thread, "ns": ns,
                                        "checkpoint_id": checkpoint_id, "task_id": str(task_id),
                                        "task_path": task_path, "writes": rows}])

    def _checkpoint_record(self, thread: str, ns: str, parent: str | None, checkpoint: Checkpoint,
                           metadata: CheckpointMetadata, new_versions: ChannelVersions,
                           previous: Entry | None) -> Record:
        carried = {row[0]: row for row in previous["channels"]} if previous else {}
        values = []
        for channel, version in checkpoint["channel_versions"].items():
            old = carried.get(channel)
            if channel not in new_versions and old is not None and old[1] == version \
                    and old[2] != MISSING:
                continue  # unchanged: the previous checkpoint's value stands
            if channel in checkpoint["channel_values"]:
                payload = self.payloads.encode(checkpoint["channel_values"][channel],
                                               base=old[2] if old else None)
            else:
                payload = EMPTY
            values.append([channel, version, payload])
        skeleton = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        kind, data = self.serde.dumps_typed(skeleton)
        return {"type": "checkpoint", "thread": thread, "ns": ns,
                "checkpoint_id": checkpoint["id"], "parent_id": parent,
                "checkpoint": [kind, data.hex()], "metadata": dict(metadata),
                "versions": [[c, v] for c, v in checkpoint["channel_versions"].items()],
                "values": values}

    def _record(self, session: Session, records: list[Record]) -> None:
        """Append the saver's records in one write: names exact, free text redacted here."""
        if session.policy.redact:
            records = [_redacted(record) for record in records]
        session.record_many(list[Record | Event](records), durability=self.durability,
                            redact=False)

    @contextmanager
    def _writing(self, sk: str, thread: str,
                 config: RunnableConfig | None = None) -> Iterator[Session]:
        """The thread's session under its lock, in the workspace the config (or saver) names."""
        with self.live.lock(sk):
            yield self._session(sk, thread, config)

    def _session(self, sk: str, thread: str, config: RunnableConfig | None) -> Session:
        """The thread's session (call under its lock), checked against the workspace asked for."""
        given = ((config or {}).get("configurable") or {}).get("workspace") or self.workspace
        workspace = os.fspath(given) if given else None
        session = self.live.open(
            sk, start=lambda: self._start(sk, thread, workspace),
            continue_old=lambda row: self._continue(sk, thread, row, workspace))
        if workspace is not None and os.path.realpath(workspace) != session.workspace:
            raise InvalidWorkspace(f"langgraph thread {thread!r} runs in {session.workspace}, "
                                   f"not {os.path.realpath(workspace)}")
        return session

    def _start(self, sk: str, thread: str, workspace: str | None) -> Session:
        return self.keeper.start(workspace or self.keeper.store.layout.root,
                                 title=f"langgraph {thread}", agent=AGENT, thread_id=sk,
                                 baseline=workspace is not None)

    def _continue(self, sk: str, thread: str, row: ThreadRow, workspace: str | None) -> Session:
        """A thread an earlier process wrote: resume it through the check, or (no workspace) attach."""
        home = os.path.realpath(self.keeper.store.layout.root)
        if workspace is None and row.cwd == home and row.latest_session:
            session = self.keeper.attach(row.latest_session)
            session.transition("resume", "langgraph: a new process continues the thread")
            return session
        where = workspace or row.cwd or home
        decision: Decision | None = "continue" if self.on_drift == "continue" else None
        report, resumed = self.keeper.resume(sk, workspace=where, decision=decision)
        if resumed is None:
            kinds = ", ".join(sorted({d.kind for d in report.differences})) or report.verdict
            raise ResumeRefused(f"langgraph thread {thread!r} would resume with {report.verdict} "
                                f"in {where} ({kinds}); check it with `sessionkeeper "
                                f"--check-resume {sk}`", report)
        return resumed

    # ---- reading ----------------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by the config, or its namespace's newest; None when absent."""
        thread, ns, checkpoint_id = _keys(config)
        sk = session_thread_id(thread)
        entry = self.log.newest(sk, ns)
        if entry is not None and checkpoint_id in (None, entry["id"]):
            return self.log.tuple_of(thread, ns, entry)
        if checkpoint_id is None or entry is None:
            return None
        found = self.log.history(sk).namespaces.get(ns, {}).get(checkpoint_id)
        return self.log.tuple_of(thread, ns, found) if found else None

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None,
             limit: int | None = None) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first (by id): of one thread (and namespace), or of every thread;
        at most `limit` (0 or below: none, as LangGraph's InMemorySaver)."""
        asked: str | None = None  # the thread asked for names its tuples (the log's may be redacted)
        if config is None:
            threads: list[str] = list(graph_threads(self.keeper.store, AGENT))
            ns_only, only_id = None, None
        else:
            asked, _, only_id = _keys(config)
            threads = [session_thread_id(asked)]
            ns_only = (config.get("configurable") or {}).get("checkpoint_ns")
        before_id = get_checkpoint_id(before) if before else None
        chosen: list[tuple[str, str, Entry]] = []
        for sk in threads:
            history = self.log.history(sk)
            for ns, entries in history.namespaces.items():
                if ns_only is not None and ns != ns_only:
                    continue
                chosen += [(ns, history.thread or "", e) for e in entries.values()
                           if (only_id is None or e["id"] == only_id)
                           and (before_id is None or e["id"] < before_id)
                           and all(e["metadata"].get(k) == v for k, v in (filter or {}).items())]
        chosen.sort(key=lambda item: item[2]["id"], reverse=True)
        for ns, thread_id, entry in chosen[:max(limit, 0)] if limit is not None else chosen:
            yield self.log.tuple_of(asked or entry.get("thread") or thread_id, ns, entry)

    # ---- deleting, copying, pruning ---------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        """Delete a LangGraph thread for good: its rollouts and index rows."""
        sk = session_thread_id(thread_id)
        with self.live.lock(sk):
            self.live.forget(sk)
            self.keeper.delete(sk)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of a thread, in order, onto another thread."""
        history = self.log.history(session_thread_id(source_thread_id))
        target = str(target_thread_id)
        records = restated_records(history, thread=target)
        if records:
            sk = session_thread_id(target)
            with self._writing(sk, target) as session:
                self._record(session, records)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """keep_latest: hide all but each namespace's newest checkpoint; delete: delete the thread.

        keep_latest records the removal: the log keeps the bytes until the thread is deleted.
        """
        if strategy not in ("keep_latest", "delete"):
            raise InvalidEvent(f"strategy: {strategy!r} is not keep_latest or delete")
        for thread_id in thread_ids:
            if strategy == "delete":
                self.delete_thread(thread_id)
                continue
            sk = session_thread_id(thread_id)
            history = self.log.history(sk)
            keep = {e["id"] for e in history.latest.values()}

            def superseded(entry: Entry, keep: set[str] = keep) -> bool:
                return entry["id"] not in keep

            self._remove(sk, str(thread_id), history, superseded, reason="prune keep_latest")

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Remove every checkpoint (with its writes) whose metadata names one of `run_ids`."""
        runs = set(map(str, run_ids))
        if not runs:
            return
        for sk in list(graph_threads(self.keeper.store, AGENT)):
            history = self.log.history(sk)
            if history.thread is not None:
                self._remove(sk, history.thread, history,
                             lambda e: str(e["metadata"].get("run_id")) in runs,
                             reason="delete_for_runs")

    def _remove(self, sk: str, thread: str, history: History, doomed: Callable[[Entry], bool], *,
                reason: str) -> None:
        records = removal_records(history, thread=thread, doomed=doomed, reason=reason)
        if records:
            with self._writing(sk, thread) as session:
                self._record(session, records)

    # ---- versions ---------------------------------------------------------------------------

    def get_next_version(self, current: str | None, channel: None = None) -> str:
        """A version above `current`, unique across branches (a random fraction after the count)."""
        count = int(str(current).split(".")[0]) if current is not None else 0
        return f"{count + 1:032}.{secrets.randbelow(10**16):016}"

    # ---- async: the rest of it is `ThreadedAsync`'s -----------------------------------------

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                          task_id: str, task_path: str = "") -> None:
        """`put_writes` off the event loop (counted as under way from the moment it is called)."""
        sk = session_thread_id(_keys(config)[0])
        self._under_way.enter(sk)
        try:
            await asyncio.to_thread(self._put_writes, config, writes, task_id, task_path)
        finally:
            self._under_way.leave(sk)
