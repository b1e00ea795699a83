"""The Keeper's resume: check a thread against a workspace, then carry the decision out.

Data flows one way: `replay` folds the rollouts into state, `assess` turns state and workspace
into a report, `plan` turns report and decision into an action, and this module carries the
action out. Invariants: a check changes nothing on disk; a resume reads, decides and acts under
the thread's writer lock (which passes to the new session), so nothing is appended meanwhile —
only a fork or an export may go on without it, and then quarantines nothing; nothing continues on
`blocked`, nor on `drift` without a decision.
"""

from __future__ import annotations

import dataclasses
import os
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .. import ids
from ..errors import GitRefused, InvalidEvent, InvalidId, ThreadBusy, UnknownThread
from ..recovery.baseline import identity_of
from ..store.index import ListQuery, ThreadRow
from .assessing import assess_here

if TYPE_CHECKING:  # imported where first needed: a check loads only its own part
    from filelock import BaseFileLock

    from ..recovery.lifecycle import HookRun
    from ..recovery.plan import Action
    from ..recovery.replay import Replayed
    from ..recovery.report import Decision, Report
    from ..session.live import Session
    from ..store.reader import Rollout
    from .agent_threads import AgentThreads
    from .catalog import Catalog
    from .ground import Ground
    from .sessions import Sessions
    from .sharing import Sharing


class Recovery:
    """Check, resume and fork of a thread: the report first, then the decision carried out."""

    def __init__(self, ground: Ground, catalog: Catalog, sessions: Sessions, sharing: Sharing,
                 agent_threads: AgentThreads) -> None:
        """`catalog` finds and replays threads, `sessions` continues them, `sharing` pulls them
        and holds their leases; an agent's thread is `agent_threads`' to check and resume."""
        self.ground = ground
        self.catalog = catalog
        self.sessions = sessions
        self.sharing = sharing
        self.agents = agent_threads

    def _resolve(self, thread_id: str | None, *, workspace: str, latest: bool) -> str:
        """The thread to resume: the given id, or the latest one of the workspace."""
        if thread_id is not None:
            from .agent_threads import agent_thread_id

            derived = agent_thread_id(thread_id)
            if derived != thread_id and not self.agents.is_agent_thread(derived):
                raise InvalidId(f"invalid thread id {thread_id!r}: expected a lowercase UUID, or the "
                                "id of a Hermes session Session Keeper can read")
            return ids.thread_id(derived)
        if not latest:
            raise UnknownThread("name a thread or ask for the latest one")
        rows = self.catalog.rows(workspace=workspace, limit=1) or self._rows_of_repository(workspace)
        if not rows:
            raise UnknownThread(f"no thread recorded for workspace {os.path.realpath(workspace)} "
                                "or its repository")
        return rows[0].thread_id

    def _rows_of_repository(self, workspace: str) -> list[ThreadRow]:
        """The newest thread of the same repository recorded elsewhere (a CI checkout, a clone)."""
        try:
            found = identity_of(os.path.realpath(workspace))
        except GitRefused:
            return []
        if found is None or not found[1].root_commits:
            return []
        self.ground.live.flush()
        return self.ground.store.list_threads(ListQuery(repo_key=found[1].root_commits[0], limit=1,
                                                 agents=self.agents.agent_filter()))

    def check_resume(self, thread_id: str | None, *, workspace: str, latest: bool = False,
                     requested: dict[str, Any] | None = None) -> Report:
        """Dry run of a resume: the report, nothing changed on disk."""
        thread = self._resolve(thread_id, workspace=workspace, latest=latest)
        if self.agents.is_agent_thread(thread):
            return self.agents.check_agent(thread, workspace=workspace, requested=requested)
        self.sharing.pull(thread)
        return assess_here(thread, self.catalog.replay(thread), workspace=workspace,
                           requested=requested)

    def resume(self, thread_id: str | None, *, workspace: str, decision: Decision | None = None,
               latest: bool = False,
               requested: dict[str, Any] | None = None) -> tuple[Report, Session | None]:
        """Resume for real: the report, and the new session (None when nothing continues)."""
        from ..recovery.report import DECISIONS

        if decision is not None and decision not in DECISIONS:
            raise InvalidEvent(f"unknown decision {decision!r}: expected one of {list(DECISIONS)}")
        thread = self._resolve(thread_id, workspace=workspace, latest=latest)
        if self.agents.is_agent_thread(thread):  # the agent's to continue: never a session of ours
            return self.agents.resume_agent(thread, workspace=workspace, decision=decision,
                                     requested=requested)[0], None
        self.sharing.pull(thread)
        taken = self.sharing.take_lease(thread) if decision not in ("fork", "export") else None
        try:
            report, session = self._resume_here(thread, workspace=workspace, decision=decision,
                                                requested=requested)
        except BaseException:
            self.sharing.release_lease(thread)
            raise
        if session is None or session.thread_id != thread:  # nothing continues the thread here
            self.sharing.release_lease(thread)
        if taken is not None and taken.took_over_from:
            report = dataclasses.replace(report, notes=[
                *report.notes, f"took the thread over from {taken.took_over_from}"])
        return report, session

    def _resume_here(self, thread: str, *, workspace: str, decision: Decision | None,
                     requested: dict[str, Any] | None) -> tuple[Report, Session | None]:
        """`resume` once the thread is pulled and its shared lease is ours."""
        from ..recovery.plan import plan

        try:
            lock: BaseFileLock | None = self.ground.store.lock_thread(thread, purpose="resume it")
        except ThreadBusy:
            if decision not in ("fork", "export"):
                raise
            lock = None  # open elsewhere: forking or exporting only reads it (no quarantine)
        try:  # read, decide and carry out under the writer lock: nothing is appended meanwhile
            replayed = self.catalog.replay(thread)
            report = assess_here(thread, replayed, workspace=workspace, requested=requested)
            if not replayed.rollouts:
                return report, None
            action = plan(report, decision)
            if action.kind == "relocate" and action.workspace:
                if lock is not None:
                    lock.release()
                    lock = None
                return self.resume(thread, workspace=action.workspace, decision="relocate",
                                   requested=requested)
            report = dataclasses.replace(report, decision=decision)
            if lock is not None:
                report = dataclasses.replace(report, quarantined=self._quarantine(replayed))
            if action.kind == "export":
                path = self.ground.store.write_export(thread, {"meta": replayed.meta,
                                                        "state": replayed.state.snapshot(),
                                                        "report": report.to_json()})
                return dataclasses.replace(report, export_path=str(path)), None
            if action.kind == "stop":
                return report, None
            session, hooks = self._carry_out(action, replayed, report, decision, lock=lock)
            if action.kind != "fork":
                lock = None  # now held by the new session's writer
        finally:
            if lock is not None:
                lock.release()
        return dataclasses.replace(
            report, reset=self._maybe_reset(session, replayed), hook_failures=hooks.failures,
            hook_context=hooks.added_context, continued=True, session_id=session.session_id,
            new_thread_id=session.thread_id if action.kind == "fork" else None), session

    def _carry_out(self, action: Action, replayed: Replayed, report: Report,
                   decision: Decision | None, *,
                   lock: BaseFileLock | None) -> tuple[Session, HookRun]:
        fork = action.kind == "fork"
        return self.sessions.continue_thread(replayed, workspace=report.workspace,
                                    source="fork" if fork else "resume", reason=action.reason,
                                    decision=decision or "ok", fork=fork,
                                    lock=None if fork else lock)

    def _quarantine(self, replayed: Replayed) -> list[dict[str, Any]]:
        """Cut the torn tails of a thread off (its lock is held) and say where they went."""
        from ..store.quarantine import quarantine_tail

        out = []
        for rollout in replayed.rollouts:
            if rollout.tail is None:
                continue
            done = quarantine_tail(self.ground.store.layout, rollout, locked=True)
            if done is not None:
                out.append({**dataclasses.asdict(done), "action": "quarantined"})
        return out

    def _maybe_reset(self, session: Session, replayed: Replayed) -> str | None:
        """Apply the reset policy: an idle or daily boundary since the last activity → idle_reset."""
        records = replayed.latest.records
        last = (records[-1] if records else replayed.meta).get("ts")
        if not last:
            return None
        then = datetime.fromisoformat(last.replace("Z", "+00:00"))
        reason = self.ground.reset_policy.due(then, datetime.now(timezone.utc))
        if reason is not None:
            session.transition("idle_reset", reason)
        return reason

    def fork(self, thread_id: str, *, at_seq: int | None = None,
             workspace: str | None = None) -> Session:
        """Start a new thread from a thread's state as of `at_seq` (default: its latest seq)."""
        from ..recovery.replay import replay
        from ..store.log import thread_log

        self.ground.live.flush(thread_id)
        rollouts = self.ground.store.read_thread(thread_id, full=at_seq is not None)
        if at_seq is not None:
            readable = [r for r in rollouts if r.meta]
            first, last = _first_seq(readable[0]), readable[-1].last_seq
            if not first <= at_seq <= last:
                raise InvalidEvent(f"at_seq {at_seq} is outside the thread's records "
                                   f"(seq {first}..{last})")
            rollouts = [_cut(r, at_seq) for r in readable if _first_seq(r) <= at_seq]
        replayed = replay(rollouts, log=thread_log(self.ground.store, thread_id))
        cwd = workspace or replayed.meta["cwd"]
        session, _ = self.sessions.continue_thread(
            replayed, workspace=cwd, source="fork",
            reason=f"forked at seq {replayed.restored_to_seq}", fork=True)
        return session


def _first_seq(rollout: Rollout) -> int:
    return int(rollout.meta["seq"]) if rollout.meta else 0


def _cut(rollout: Rollout, at_seq: int) -> Rollout:
    """A copy of a rollout holding only records up to `at_seq`."""
    return dataclasses.replace(rollout, records=[r for r in rollout.records if r["seq"] <= at_seq])
