"""The Keeper's opening of sessions: start a thread, continue one, attach to one.

Invariants: every session this Keeper opens is in `ground.live` (thread id → session) until it
closes, and is the thread's only writer (it holds the thread lock, `store.writer`); a new
session's meta is redacted before it reaches disk and is durable before the session is returned;
a continued or forked session starts at the seq after the state it continues, with that state's
snapshot.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any

from .. import ids
from ..errors import InvalidEvent, InvalidWorkspace, UnknownThread
from ..events import Source, plain
from ..recovery.baseline import capture

if TYPE_CHECKING:  # imported where first needed: a listing or a check loads only its own part
    from filelock import BaseFileLock

    from ..recovery.lifecycle import HookRun
    from ..recovery.replay import Replayed
    from ..recovery.state import SessionState
    from ..schema import Permissions, SessionMeta
    from ..session.live import Session
    from .ground import Ground
    from .sharing import Sharing


class Sessions:
    """Opens sessions: starts a thread, continues or forks a replayed one, attaches to one."""

    def __init__(self, ground: Ground, sharing: Sharing) -> None:
        """`sharing`: takes a thread's shared lease as a session opens (when there is an index)."""
        self.ground = ground
        self.sharing = sharing

    def start(self, workspace: str | os.PathLike[str], *, title: str | None = None,
              permissions: Permissions | dict[str, Any] | None = None,
              model: str | None = None, agent: str | None = None,
              thread_id: str | None = None, baseline: bool = True,
              lock: BaseFileLock | None = None, reason: str = "new thread") -> Session:
        """Start a new thread in `workspace`: capture its git baseline, record session_meta.

        `agent` names a framework recording through Session Keeper (listed as such); `thread_id`
        gives the new thread a chosen id (a validated UUID no other thread has); `baseline=False`
        records none (a framework thread that names no workspace of its own); `lock`: the new
        thread's writer lock when the caller already holds it; `reason`: of the startup record.
        """
        from ..recovery.state import SessionState
        from ..schema import Machine, SessionMeta
        from ..store.machine import host_name, user_name

        cwd = _directory(workspace)
        thread = ids.thread_id(thread_id) if thread_id is not None else ids.new_id()
        if thread_id is not None and self._exists(thread):
            raise InvalidEvent(f"thread_id: {thread} is taken")
        meta = SessionMeta(
            thread_id=thread, session_id=ids.new_id(), cwd=cwd,
            baseline=capture(cwd) if baseline else None,
            permissions=_permissions(permissions), model=model, client=self.ground.client,
            title=title, source="startup", agent=agent, machine=Machine(host=host_name(), user=user_name()),
        )
        session = self._open(meta, first_seq=0, state=SessionState(), lock=lock)
        session.transition("startup", reason)
        session.see_workspace()  # files already changed at start: their content before the agent
        return session

    def _open(self, meta: SessionMeta, *, first_seq: int, state: SessionState,
              lock: BaseFileLock | None = None) -> Session:
        from ..events import own_body
        from ..redact import redact_value
        from ..session.live import Session
        from ..store.log import thread_log

        ground, record = self.ground, plain(meta)
        if ground.policy.redact:  # titles, paths and client names reach disk and the index too
            record = redact_value(record)
        writer = ground.store.create(record, own_body(record), first_seq=first_seq,
                                     durability=ground.durability, lock=lock)
        state.apply(writer.meta)
        state.attach_log(thread_log(ground.store, writer.thread_id, before=writer.recorder.flush))
        return self._adopt(Session(writer, state, policy=ground.policy, hooks=ground.hooks,
                                   on_close=ground.live.closed, workspace=meta.cwd))

    def _exists(self, thread: str) -> bool:
        try:
            self.ground.store.thread_sessions(thread)
        except UnknownThread:
            return False
        return True

    def _adopt(self, session: Session) -> Session:
        """Hold a session that just opened: its shared lease first (ThreadBusy closes it)."""
        self.sharing.adopt(session)
        return self.ground.live.adopt(session)

    def continue_thread(self, replayed: Replayed, *, workspace: str, source: Source, reason: str,
                        decision: str | None = None, fork: bool = False,
                        lock: BaseFileLock | None = None) -> tuple[Session, HookRun]:
        """Open a new session continuing (or forking) a replayed thread; writes meta + snapshot.

        Returns the session and what its lifecycle hooks did. `lock`: the thread's writer lock
        when the caller already holds it (it passes to the session).
        """
        from ..recovery.status import status_summary
        from ..schema import ForkedFrom, Machine, SessionMeta
        from ..store.machine import host_name, user_name

        previous = replayed.meta
        cwd = _directory(workspace)
        permissions = replayed.state["permissions"].summary()
        model = replayed.state["model"].summary()
        title = status_summary(replayed.state, previous)["title"]
        meta = SessionMeta(
            thread_id=ids.new_id() if fork else previous["thread_id"], session_id=ids.new_id(),
            resumed_from=None if fork else previous["session_id"],
            forked_from=ForkedFrom(thread_id=previous["thread_id"],
                                   session_id=previous["session_id"],
                                   seq=replayed.restored_to_seq) if fork else None,
            cwd=cwd, baseline=capture(cwd), source=source, client=self.ground.client,
            permissions=_permissions(permissions), model=model.get("effective"),
            title=f"{title} (fork)" if fork and title else title, agent=previous.get("agent"),
            machine=Machine(host=host_name(), user=user_name()),
        )
        session = self._open(meta, first_seq=replayed.restored_to_seq + 1, state=replayed.state,
                             lock=lock)
        if fork:  # a fork's state is in its snapshot alone: on disk before any hook or git runs
            session.snapshot()
        run = session.transition(source, reason, decision=decision).hooks
        session.see_workspace()
        session.snapshot()
        return session, run

    def attach(self, session_id: str) -> Session:
        """Re-open the newest session of a thread to record more (e.g. `sessionkeeper record`)."""
        from ..recovery.replay import replay
        from ..session.live import Session
        from ..store.log import thread_log

        ground = self.ground
        writer, _ = ground.store.reopen(session_id, durability=ground.durability)
        try:
            replayed = replay(ground.store.read_thread(writer.thread_id),
                              log=thread_log(ground.store, writer.thread_id,
                                             before=writer.recorder.flush))
        except BaseException:
            writer.close()
            raise
        session = Session(writer, replayed.state, policy=ground.policy, hooks=ground.hooks,
                          on_close=ground.live.closed)
        session.carry_snapshot_budget(replayed.latest)
        return self._adopt(session)


def _directory(workspace: str | os.PathLike[str]) -> str:
    """The real path of a workspace that must be an existing directory."""
    cwd = os.path.realpath(workspace)
    if not os.path.isdir(cwd):
        raise InvalidWorkspace(f"workspace {cwd} is not an existing directory")
    return cwd


def _permissions(given: Permissions | dict[str, Any] | None) -> Permissions:
    """Permissions from the caller, checked (an unknown mode is an InvalidEvent)."""
    from typing import get_args

    from ..events import ApprovalMode, SandboxPolicy
    from ..schema import Permissions

    if isinstance(given, Permissions):
        return given
    if given is None:  # the defaults (an agent's journal, a framework thread): no pydantic
        return Permissions()
    known = {"approval_mode": get_args(ApprovalMode), "sandbox_policy": get_args(SandboxPolicy)}
    if isinstance(given, dict) and set(given) <= {*known, "tool_profile"} and all(
            given[k] in choices for k, choices in known.items() if k in given) and isinstance(
            given.get("tool_profile", ""), str):  # the plain valid case: no pydantic needed
        return Permissions(**given)
    from ..session.validate import validate_event

    event = validate_event({"type": "permissions", **(given or {})})
    return Permissions(**{f.name: getattr(event, f.name) for f in dataclasses.fields(Permissions)})
