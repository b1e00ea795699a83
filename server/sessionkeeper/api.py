"""The Python API for agent harnesses: start, record, resume, fork, archive, list, read.

    keeper = Keeper()                                   # store from $SESSIONKEEPER_HOME or per-user dir
    with keeper.start("/path/to/repo", title="fix payment") as session:
        session.record({"type": "message", "role": "user", "text": "fix the rounding bug"})
    report, session = keeper.resume(thread_id, workspace="/path/to/repo")
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

from . import ids
from .errors import InvalidEvent, InvalidWorkspace
from .events import (
    ClientInfo,
    Durability,
    ForkedFrom,
    Lifecycle,
    Permissions,
    SessionMeta,
    Source,
    event_body,
)
from .redact import redact_value
from .session import Session
from .store.index import ListQuery
from .store.recorder import Ack
from .store.store import Store

Progress = Callable[[int, int], None]


class Keeper:
    """One store, its hooks and its defaults; creates and resumes sessions."""

    def __init__(self, store: Path | str | None = None, *, durability: Durability | str = "written",
                 redact: bool = True, snapshot_min_bytes: int = 256 * 1024,
                 client: ClientInfo | None = None, hooks: Any = None,
                 reset_policy: str = "none") -> None:
        self._root = store
        self.durability = Durability(durability)
        self.redact = redact
        self.snapshot_min_bytes = snapshot_min_bytes
        self.client = client or ClientInfo(name="sessionkeeper-python")
        from .recovery.lifecycle import HookRegistry, ResetPolicy

        self.hooks = hooks if hooks is not None else HookRegistry()
        self.reset_policy = ResetPolicy(reset_policy)
        self.live: dict[str, Session] = {}  # thread id -> the open session of this Keeper

    def _sync_live(self, thread_id: str | None = None) -> None:
        """Write out buffered (`none`) records and index rows of this Keeper's open sessions,
        so that reads see everything they acknowledged."""
        for thread, session in list(self.live.items()):
            if thread_id in (None, thread) and session.writer.recorder.read_only_reason is None:
                session.flush()

    @cached_property
    def store(self) -> Store:
        """The store, opened on first need."""
        return Store(self._root)

    # ---- starting ---------------------------------------------------------------------------

    def start(self, workspace: str | os.PathLike[str], *, title: str | None = None,
              permissions: Permissions | dict[str, Any] | None = None,
              model: str | None = None) -> Session:
        """Start a new thread in `workspace`: capture its git baseline, record session_meta."""
        from .recovery.baseline import capture

        cwd = _directory(workspace)
        meta = SessionMeta(
            thread_id=ids.new_id(), session_id=ids.new_id(), cwd=cwd, baseline=capture(cwd),
            permissions=Permissions.model_validate(permissions or {}, strict=False),
            model=model, client=self.client, title=title, source="startup",
        )
        session = self._open(meta, first_seq=0, state=None)
        self.transition(session, "startup", "new thread")
        return session

    def _open(self, meta: SessionMeta, *, first_seq: int, state: Any, lock: Any = None) -> Session:
        from .recovery.state import SessionState

        record = meta.model_dump(mode="json", exclude_none=True)
        if self.redact:  # titles, paths and client names reach disk and the index too
            record = redact_value(record)
        writer = self.store.create(record, event_body(record), first_seq=first_seq,
                                   durability=self.durability, lock=lock)
        state = state if state is not None else SessionState()
        state.apply(writer.meta)
        session = Session(self, writer, state)
        self.live[session.thread_id] = session
        return session

    def continue_thread(self, replayed: Any, *, workspace: str, source: Source, reason: str,
                        decision: str | None = None, fork: bool = False, lock: Any = None) -> Session:
        """Open a new session continuing (or forking) a replayed thread; writes meta + snapshot.

        `lock`: the thread's writer lock when the caller already holds it (it passes to the session).
        """
        from .recovery.baseline import capture

        previous = replayed.meta
        cwd = _directory(workspace)
        permissions = replayed.state["permissions"].current()
        model = replayed.state["model"].summary()
        meta = SessionMeta(
            thread_id=ids.new_id() if fork else previous["thread_id"], session_id=ids.new_id(),
            resumed_from=None if fork else previous["session_id"],
            forked_from=ForkedFrom(thread_id=previous["thread_id"],
                                   session_id=previous["session_id"],
                                   seq=replayed.restored_to_seq) if fork else None,
            cwd=cwd, baseline=capture(cwd), source=source, client=self.client,
            permissions=Permissions.model_validate(permissions, strict=False),
            model=model.get("effective"), title=_title(self.summary_of(replayed.state, previous),
                                                       fork=fork),
        )
        session = self._open(meta, first_seq=replayed.restored_to_seq + 1, state=replayed.state,
                             lock=lock)
        self.transition(session, source, reason, decision=decision)
        session.snapshot()
        return session

    def attach(self, session_id: str) -> Session:
        """Re-open the newest session of a thread to record more (e.g. `sessionkeeper record`)."""
        from .recovery.replay import replay

        writer, _ = self.store.reopen(session_id, durability=self.durability)
        try:
            replayed = replay(self.store.read_thread(writer.thread_id))
        except BaseException:
            writer.close()
            raise
        session = Session(self, writer, replayed.state)
        session.carry_snapshot_budget(replayed.latest)
        self.live[session.thread_id] = session
        return session

    # ---- lifecycle --------------------------------------------------------------------------

    def transition(self, session: Session, source: Source, reason: str, *,
                   decision: str | None = None, context: dict[str, Any] | None = None) -> Ack:
        """Record a lifecycle event, then fire the hooks for `source` (failures isolated)."""
        ack = session.record_own(Lifecycle(source=source, reason=reason, decision=decision),
                                 durability=Durability.DURABLE)
        run = self.hooks.run(source, {"thread_id": session.thread_id,
                                      "session_id": session.session_id,
                                      "workspace": session.writer.meta.get("cwd"),
                                      **(context or {})})
        session.hook_run = run
        if run.failures:
            session.record_own(Lifecycle(source=source, reason="hook failures",
                                         data={"hook_failures": run.failures, "of_seq": ack.seq}))
        return ack

    # ---- reading ----------------------------------------------------------------------------

    def list(self, *, workspace: str | None = None, include_archived: bool = False,
             cursor: tuple[str, str] | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Threads newest first (of one workspace, if given), from the index."""
        cwd = os.path.realpath(workspace) if workspace else None
        self._sync_live()
        return self.store.list_threads(ListQuery(cwd=cwd, include_archived=include_archived,
                                                 cursor=cursor, limit=limit))

    def threads(self, *, workspace: str | None = None, include_archived: bool = False,
                cursor: tuple[str, str] | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Thread summaries (PROTOCOL.md ThreadSummary), each with an estimated resume `state`
        against `workspace` (repository, branch, HEAD; one git look-up for the whole page)."""
        from .recovery.baseline import capture
        from .recovery.summary import estimate_state, thread_summary

        rows = self.list(workspace=workspace, include_archived=include_archived, cursor=cursor,
                         limit=limit)
        if not rows or workspace is None:  # no workspace: nothing to estimate against
            return [thread_summary(row) for row in rows]
        root = os.path.realpath(workspace)
        current = capture(root, dirty=False) if os.path.isdir(root) else None
        return [thread_summary(row, state=estimate_state(row, current) if current or not
                               row.get("repo_key") else "blocked") for row in rows]

    def replay(self, thread_id: str, *, full: bool = False) -> Any:
        """Rebuild a thread's state from its latest snapshot and the tail after it."""
        from .recovery.replay import replay

        self._sync_live(thread_id)
        return replay(self.store.read_thread(thread_id, full=full))

    def summary_of(self, state: Any, meta: dict[str, Any]) -> dict[str, Any]:
        """Title, branch, todo/test progress and cost of a folded state."""
        from .recovery.summary import status_summary

        return status_summary(state, meta)

    # ---- resume / fork / archive -------------------------------------------------------------

    def check_resume(self, thread_id: str | None, *, workspace: str, latest: bool = False,
                     requested: dict[str, Any] | None = None) -> Any:
        """Dry run of a resume: the report, nothing changed on disk."""
        from .recovery.resume import check

        return check(self, thread_id, workspace=workspace, latest=latest, requested=requested)

    def resume(self, thread_id: str | None, *, workspace: str, decision: str | None = None,
               latest: bool = False, requested: dict[str, Any] | None = None) -> tuple[Any, Any]:
        """Resume for real: (report, new Session or None when the verdict stops it)."""
        from .recovery.resume import resume

        return resume(self, thread_id, workspace=workspace, decision=decision, latest=latest,
                      requested=requested)

    def fork(self, thread_id: str, *, at_seq: int | None = None,
             workspace: str | None = None) -> Session:
        """Start a new thread from a thread's state as of `at_seq` (default: its latest seq)."""
        from .recovery.replay import replay

        self._sync_live(thread_id)
        rollouts = self.store.read_thread(thread_id, full=at_seq is not None)
        if at_seq is not None:
            readable = [r for r in rollouts if r.meta]
            first, last = readable[0].meta["seq"], readable[-1].last_seq
            if not first <= at_seq <= last:
                raise InvalidEvent(f"at_seq {at_seq} is outside the thread's records "
                                   f"(seq {first}..{last})")
            rollouts = [_cut(r, at_seq) for r in readable if r.meta["seq"] <= at_seq]
        replayed = replay(rollouts)
        cwd = workspace or replayed.meta["cwd"]
        return self.continue_thread(replayed, workspace=cwd, source="fork",
                                    reason=f"forked at seq {replayed.restored_to_seq}", fork=True)

    def archive(self, thread_id: str) -> int:
        """Move a thread's rollouts to archived_sessions/; returns files moved."""
        return self.store.set_archived(thread_id, True)

    def unarchive(self, thread_id: str) -> int:
        """Move a thread's rollouts back to sessions/; returns files moved."""
        return self.store.set_archived(thread_id, False)

    def fsck(self, *, repair: bool = False) -> Any:
        """Compare the index with the rollouts; with `repair`, fix what can be fixed."""
        from .store.repair import fsck

        return fsck(self.store, repair=repair)

    def reindex(self, progress: Progress | None = None) -> dict[str, int]:
        """Rebuild the index from the rollouts."""
        return self.store.rebuild(progress)


def _directory(workspace: str | os.PathLike[str]) -> str:
    """The real path of a workspace that must be an existing directory."""
    cwd = os.path.realpath(workspace)
    if not os.path.isdir(cwd):
        raise InvalidWorkspace(f"workspace {cwd} is not an existing directory")
    return cwd


def _title(summary: dict[str, Any], *, fork: bool) -> str | None:
    """The title a continued session carries; a fork says so."""
    title = summary.get("title")
    return f"{title} (fork)" if fork and title else title


def _cut(rollout: Any, at_seq: int) -> Any:
    """A copy of a rollout holding only records up to `at_seq`."""
    import dataclasses

    return dataclasses.replace(rollout, records=[r for r in rollout.records if r["seq"] <= at_seq])
