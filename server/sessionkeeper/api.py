"""The Python API for agent harnesses: start, record, resume, fork, archive, list, read.

    keeper = Keeper()                                   # store from $SESSIONKEEPER_HOME or per-user dir
    with keeper.start("/path/to/repo", title="fix payment") as session:
        session.record({"type": "message", "role": "user", "text": "fix the rounding bug"})
    report, session = keeper.resume(thread_id, workspace="/path/to/repo")

Data flows one way: the store gives rollouts, `replay` folds them into state, `assess` turns
state and workspace into a report, `plan` turns report and decision into an action, and the
Keeper carries the action out (locks, quarantine, a new session, an export).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import ids
from .agent_threads import AgentThreads
from .content_actions import ContentActions
from .errors import GitRefused, InvalidEvent, InvalidWorkspace, ThreadBusy, UnknownThread
from .events import Durability, Source, plain
from .journals import Journals
from .policy import SessionPolicy
from .recovery.baseline import capture, identity_of
from .recovery.lifecycle import HookRegistry, HookRun, ResetPolicy
from .store.index import ListQuery, SessionRow, ThreadRow
from .store.log import thread_log
from .store.store import Store

if TYPE_CHECKING:  # imported where first needed: a listing or a check loads only its own part
    from filelock import BaseFileLock

    from .agents.importer import AgentSources
    from .listing import BaselineCache
    from .recovery.findings import Difference
    from .recovery.plan import Action
    from .recovery.replay import Replayed
    from .recovery.report import Decision, Report
    from .recovery.state import SessionState
    from .recovery.summary import BaselineSource, ThreadSummary
    from .schema import ClientInfo, Permissions, SessionMeta
    from .session import Session
    from .store.fsck import FsckReport
    from .store.reader import Rollout

Progress = Callable[[int, int], None]


class Keeper(ContentActions, Journals, AgentThreads):
    """One store, its hooks and its defaults; creates, resumes and forks sessions.

    Content settings: files over `content_limit_bytes` are kept by hash only, secret-named files
    too unless `allow_secret_files`; `blob_cap_bytes` caps the blob store when `gc()` runs.
    `agents`: the agents' own logs listed and checked as threads (None: only our rollouts).
    """

    def __init__(self, store: Path | str | None = None, *, durability: Durability | str = "written",
                 redact: bool = True, snapshot_min_bytes: int = 256 * 1024,
                 client: ClientInfo | None = None, hooks: HookRegistry | None = None,
                 reset_policy: ResetPolicy | str = "none", read_only: bool = False,
                 content_limit_bytes: int = 10 << 20, allow_secret_files: bool = False,
                 blob_cap_bytes: int | None = None, agents: AgentSources | None = None) -> None:
        """`read_only`: only read the store (nothing created or changed on disk)."""
        self._root = store
        self.agent_sources = agents
        self.read_only = read_only
        self.durability = Durability(durability)
        self.policy = SessionPolicy(redact=redact, snapshot_min_bytes=snapshot_min_bytes,
                                    content_limit_bytes=content_limit_bytes,
                                    allow_secret_files=allow_secret_files)
        self.allow_secret_files = allow_secret_files
        self.blob_cap_bytes = blob_cap_bytes
        self._client = client
        self.hooks = hooks if hooks is not None else HookRegistry()
        self.reset_policy = ResetPolicy(reset_policy)
        self.live: dict[str, Session] = {}  # thread id -> the open session of this Keeper
        self.baselines: BaselineCache | None = None  # a long-lived process's git cache

    @cached_property
    def client(self) -> ClientInfo:
        """Who records: given, or the Python API."""
        from .schema import ClientInfo

        return self._client or ClientInfo(name="sessionkeeper-python")

    @cached_property
    def store(self) -> Store:
        """The store, opened on first need."""
        return Store(self._root, read_only=self.read_only)

    def _sync_live(self, thread_id: str | None = None) -> None:
        """Write out buffered (`none`) records and index rows of this Keeper's open sessions,
        so that reads see everything they acknowledged."""
        for thread, session in list(self.live.items()):
            if thread_id in (None, thread) and session.writer.recorder.read_only_reason is None:
                session.flush()

    # ---- starting ---------------------------------------------------------------------------

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
        from .recovery.state import SessionState
        from .schema import SessionMeta

        cwd = _directory(workspace)
        thread = ids.thread_id(thread_id) if thread_id is not None else ids.new_id()
        if thread_id is not None and self._exists(thread):
            raise InvalidEvent(f"thread_id: {thread} is taken")
        meta = SessionMeta(
            thread_id=thread, session_id=ids.new_id(), cwd=cwd,
            baseline=capture(cwd) if baseline else None,
            permissions=_permissions(permissions), model=model, client=self.client, title=title,
            source="startup", agent=agent,
        )
        session = self._open(meta, first_seq=0, state=SessionState(), lock=lock)
        session.transition("startup", reason)
        session.see_workspace()  # files already changed at start: their content before the agent
        return session

    def _open(self, meta: SessionMeta, *, first_seq: int, state: SessionState,
              lock: BaseFileLock | None = None) -> Session:
        from .events import own_body
        from .redact import redact_value
        from .session import Session

        record = plain(meta)
        if self.policy.redact:  # titles, paths and client names reach disk and the index too
            record = redact_value(record)
        writer = self.store.create(record, own_body(record), first_seq=first_seq,
                                   durability=self.durability, lock=lock)
        state.apply(writer.meta)
        state.attach_log(thread_log(self.store, writer.thread_id, before=writer.recorder.flush))
        return self._adopt(Session(writer, state, policy=self.policy, hooks=self.hooks,
                                   on_close=self._closed, workspace=meta.cwd))

    def _exists(self, thread: str) -> bool:
        try:
            self.store.thread_sessions(thread)
        except UnknownThread:
            return False
        return True

    def _adopt(self, session: Session) -> Session:
        self.live[session.thread_id] = session
        return session

    def _closed(self, session: Session) -> None:
        if self.live.get(session.thread_id) is session:
            del self.live[session.thread_id]

    def continue_thread(self, replayed: Replayed, *, workspace: str, source: Source, reason: str,
                        decision: str | None = None, fork: bool = False,
                        lock: BaseFileLock | None = None) -> tuple[Session, HookRun]:
        """Open a new session continuing (or forking) a replayed thread; writes meta + snapshot.

        Returns the session and what its lifecycle hooks did. `lock`: the thread's writer lock
        when the caller already holds it (it passes to the session).
        """
        from .recovery.summary import status_summary
        from .schema import ForkedFrom, SessionMeta

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
            cwd=cwd, baseline=capture(cwd), source=source, client=self.client,
            permissions=_permissions(permissions), model=model.get("effective"),
            title=f"{title} (fork)" if fork and title else title, agent=previous.get("agent"),
        )
        session = self._open(meta, first_seq=replayed.restored_to_seq + 1, state=replayed.state,
                             lock=lock)
        run = session.transition(source, reason, decision=decision).hooks
        session.see_workspace()
        session.snapshot()
        return session, run

    def attach(self, session_id: str) -> Session:
        """Re-open the newest session of a thread to record more (e.g. `sessionkeeper record`)."""
        from .recovery.replay import replay
        from .session import Session

        writer, _ = self.store.reopen(session_id, durability=self.durability)
        try:
            replayed = replay(self.store.read_thread(writer.thread_id))
            replayed.state.attach_log(thread_log(self.store, writer.thread_id,
                                                 before=writer.recorder.flush))
        except BaseException:
            writer.close()
            raise
        session = Session(writer, replayed.state, policy=self.policy, hooks=self.hooks,
                          on_close=self._closed)
        session.carry_snapshot_budget(replayed.latest)
        return self._adopt(session)

    # ---- reading ----------------------------------------------------------------------------

    def rows(self, *, workspace: str | None = None, include_archived: bool = False,
             cursor: tuple[str, str] | None = None, limit: int = 50, agent: str | None = None,
             progress: Progress | None = None) -> list[ThreadRow]:
        """Index rows of threads, newest first (of one workspace, of one agent, if given); the
        agents' logs are imported first when they may have changed (`progress` while reading)."""
        cwd = os.path.realpath(workspace) if workspace else None
        self._sync_live()
        self.import_agents(progress)
        return self.store.list_threads(ListQuery(cwd=cwd, include_archived=include_archived,
                                                 cursor=cursor, limit=limit, agent=agent,
                                                 agents=self.agent_filter()))

    def threads(self, *, workspace: str | None = None, include_archived: bool = False,
                cursor: tuple[str, str] | None = None, limit: int = 50, agent: str | None = None,
                progress: Progress | None = None) -> list[ThreadSummary]:
        """Thread summaries, each with an estimated resume state against `workspace`
        (repository, branch, HEAD; one git look-up for the whole page, or none while the
        Keeper's `baselines` cache holds the workspace)."""
        from .listing import summaries, workspace_baseline

        rows = self.rows(workspace=workspace, include_archived=include_archived, cursor=cursor,
                         limit=limit, agent=agent, progress=progress)
        hooked = self.journaled(rows)
        sources: dict[str, BaselineSource] = {
            row.thread_id: "hook" if row.thread_id in hooked else "log"
            for row in rows if row.agent in ("codex", "claude")}
        if not rows or workspace is None:
            return summaries(rows, workspace=None, baseline=None, sources=sources)
        root = os.path.realpath(workspace)
        current = self.baselines.get(root) if self.baselines is not None \
            else workspace_baseline(root)
        return summaries(rows, workspace=root, baseline=current, sources=sources)

    def replay(self, thread_id: str, *, full: bool = False) -> Replayed:
        """Rebuild a thread's state from its latest snapshot and the tail after it.

        A rollout that claims the thread's id without continuing it is not folded: it is damage
        (so a resume is blocked until a human looks), never a silent part of the thread.
        """
        if self.is_agent_thread(thread_id):
            return self.replay_agent(thread_id)
        from .recovery.replay import replay

        self._sync_live(thread_id)
        members, foreign = self.store.chain(thread_id)
        replayed = replay(self.store.read_thread(thread_id, full=full, rows=members))
        replayed.state.attach_log(thread_log(self.store, thread_id))
        replayed.damaged += [
            {"session_id": row.session_id, "line": 1, "kind": "foreign_session",
             "reason": f"{row.path} claims this thread (seq {row.first_seq}) but continues no "
                       "session of it"} for row in foreign]
        return replayed

    # ---- resume / fork / archive -------------------------------------------------------------

    def _resolve(self, thread_id: str | None, *, workspace: str, latest: bool) -> str:
        """The thread to resume: the given id, or the latest one of the workspace."""
        if thread_id is not None:
            return ids.thread_id(thread_id)
        if not latest:
            raise UnknownThread("name a thread or ask for the latest one")
        rows = self.rows(workspace=workspace, limit=1) or self._rows_of_repository(workspace)
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
        self._sync_live()
        return self.store.list_threads(ListQuery(repo_key=found[1].root_commits[0], limit=1,
                                                 agents=self.agent_filter()))

    def _assess(self, thread: str, replayed: Replayed, *, workspace: str,
                requested: dict[str, Any] | None) -> Report:
        from .recovery.advice import advise
        from .recovery.assess import assess
        from .recovery.baseline import current_workspace, find_moved
        from .recovery.subsystems.worktree import Worktree

        recorded = replayed.state.get(Worktree).recorded()
        report = assess(replayed, current_workspace(workspace, requested=requested,
                                                    recorded=recorded),
                        thread_id=thread)
        kinds = {d.kind for d in report.differences}
        if kinds & {"cwd_missing", "branch", "head"}:
            recorded = replayed.state.get(Worktree).recorded()
            if recorded is None:
                return report
            if "cwd_missing" in kinds and recorded.identity is not None:
                moved = find_moved(recorded.identity, near=report.workspace)
                report = dataclasses.replace(report, relocate_to=moved)
            elif report.verdict == "drift":
                advice = advise(recorded, root=report.workspace)
                report = dataclasses.replace(
                    report, switch_back=advice.command, switch_back_worktree=advice.worktree,
                    notes=report.notes + ([advice.note] if advice.note else []),
                    differences=[_explained(d, report.workspace) for d in report.differences])
        return report

    def check_resume(self, thread_id: str | None, *, workspace: str, latest: bool = False,
                     requested: dict[str, Any] | None = None) -> Report:
        """Dry run of a resume: the report, nothing changed on disk."""
        thread = self._resolve(thread_id, workspace=workspace, latest=latest)
        if self.is_agent_thread(thread):
            return self.check_agent(thread, workspace=workspace, requested=requested)
        return self._assess(thread, self.replay(thread), workspace=workspace, requested=requested)

    def resume(self, thread_id: str | None, *, workspace: str, decision: Decision | None = None,
               latest: bool = False,
               requested: dict[str, Any] | None = None) -> tuple[Report, Session | None]:
        """Resume for real: the report, and the new session (None when nothing continues)."""
        from .recovery.plan import plan
        from .recovery.report import DECISIONS

        if decision is not None and decision not in DECISIONS:
            raise InvalidEvent(f"unknown decision {decision!r}: expected one of {list(DECISIONS)}")
        thread = self._resolve(thread_id, workspace=workspace, latest=latest)
        if self.is_agent_thread(thread):  # the agent's to continue: never a session of ours
            return self.resume_agent(thread, workspace=workspace, decision=decision,
                                     requested=requested)[0], None
        try:
            lock: BaseFileLock | None = self.store.lock_thread(thread, purpose="resume it")
        except ThreadBusy:
            if decision not in ("fork", "export"):
                raise
            lock = None  # open elsewhere: forking or exporting only reads it (no quarantine)
        try:  # read, decide and carry out under the writer lock: nothing is appended meanwhile
            replayed = self.replay(thread)
            report = self._assess(thread, replayed, workspace=workspace, requested=requested)
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
                path = self.store.write_export(thread, {"meta": replayed.meta,
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
        return self.continue_thread(replayed, workspace=report.workspace,
                                    source="fork" if fork else "resume", reason=action.reason,
                                    decision=decision or "ok", fork=fork,
                                    lock=None if fork else lock)

    def _quarantine(self, replayed: Replayed) -> list[dict[str, Any]]:
        """Cut the torn tails of a thread off (its lock is held) and say where they went."""
        from .store.quarantine import quarantine_tail

        out = []
        for rollout in replayed.rollouts:
            if rollout.tail is None:
                continue
            done = quarantine_tail(self.store.layout, rollout, locked=True)
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
        reason = self.reset_policy.due(then, datetime.now(timezone.utc))
        if reason is not None:
            session.transition("idle_reset", reason)
        return reason

    def fork(self, thread_id: str, *, at_seq: int | None = None,
             workspace: str | None = None) -> Session:
        """Start a new thread from a thread's state as of `at_seq` (default: its latest seq)."""
        from .recovery.replay import replay

        self._sync_live(thread_id)
        rollouts = self.store.read_thread(thread_id, full=at_seq is not None)
        if at_seq is not None:
            readable = [r for r in rollouts if r.meta]
            first, last = _first_seq(readable[0]), readable[-1].last_seq
            if not first <= at_seq <= last:
                raise InvalidEvent(f"at_seq {at_seq} is outside the thread's records "
                                   f"(seq {first}..{last})")
            rollouts = [_cut(r, at_seq) for r in readable if _first_seq(r) <= at_seq]
        replayed = replay(rollouts)
        replayed.state.attach_log(thread_log(self.store, thread_id))
        cwd = workspace or replayed.meta["cwd"]
        session, _ = self.continue_thread(
            replayed, workspace=cwd, source="fork",
            reason=f"forked at seq {replayed.restored_to_seq}", fork=True)
        return session

    def thread_sessions(self, thread_id: str) -> list[SessionRow]:
        """The session rows of a thread, oldest first (an agent thread's: its files)."""
        found = self.agent_sessions(thread_id)
        return [row for row, _ in found] if found else self.store.thread_sessions(thread_id)

    def archive(self, thread_id: str) -> int:
        """Move a thread's rollouts to archived_sessions/; returns files moved."""
        return self.store.set_archived(thread_id, True)

    def unarchive(self, thread_id: str) -> int:
        """Move a thread's rollouts back to sessions/; returns files moved."""
        return self.store.set_archived(thread_id, False)

    def delete(self, thread_id: str) -> int:
        """Delete a thread for good (its rollouts and index rows); returns rollouts removed.

        This Keeper's own open session of the thread is closed first; one open in another
        process makes this raise ThreadBusy.
        """
        thread = ids.thread_id(thread_id)
        live = self.live.get(thread)
        if live is not None:
            live.close()
        return self.store.delete_thread(thread)

    def fsck(self, *, repair: bool = False) -> FsckReport:
        """Compare the index with the rollouts; with `repair`, fix what can be fixed."""
        from .store.fsck import fsck

        return fsck(self.store, repair=repair)

    def reindex(self, progress: Progress | None = None) -> dict[str, int]:
        """Rebuild the index from the rollouts."""
        return self.store.rebuild(progress)


def _explained(difference: Difference, root: str) -> Difference:
    """A HEAD difference with how HEAD moved (commits ahead, with their subjects)."""
    from .recovery.advice import head_moved

    if difference.kind != "head" or not isinstance(difference.recorded, str) or difference.detail:
        return difference
    current = difference.current if isinstance(difference.current, str) else None
    return dataclasses.replace(difference, detail=head_moved(root, difference.recorded, current))


def _directory(workspace: str | os.PathLike[str]) -> str:
    """The real path of a workspace that must be an existing directory."""
    cwd = os.path.realpath(workspace)
    if not os.path.isdir(cwd):
        raise InvalidWorkspace(f"workspace {cwd} is not an existing directory")
    return cwd


def _permissions(given: Permissions | dict[str, Any] | None) -> Permissions:
    """Permissions from the caller, checked (an unknown mode is an InvalidEvent)."""
    from typing import get_args

    from .events import ApprovalMode, SandboxPolicy
    from .schema import Permissions

    if isinstance(given, Permissions):
        return given
    known = {"approval_mode": get_args(ApprovalMode), "sandbox_policy": get_args(SandboxPolicy)}
    if isinstance(given, dict) and set(given) <= {*known, "tool_profile"} and all(
            given[k] in choices for k, choices in known.items() if k in given) and isinstance(
            given.get("tool_profile", ""), str):  # the plain valid case: no pydantic needed
        return Permissions(**given)
    from .validate import validate_event

    event = validate_event({"type": "permissions", **(given or {})})
    return Permissions(**{f.name: getattr(event, f.name) for f in dataclasses.fields(Permissions)})


def _first_seq(rollout: Rollout) -> int:
    return int(rollout.meta["seq"]) if rollout.meta else 0


def _cut(rollout: Rollout, at_seq: int) -> Rollout:
    """A copy of a rollout holding only records up to `at_seq`."""
    return dataclasses.replace(rollout, records=[r for r in rollout.records if r["seq"] <= at_seq])

