"""The Keeper's content actions: diffs, blobs of a thread, rewind (and undo), trailers, gc.

A rewind is carried out under the thread's writer lock (the live session of this Keeper, or the
thread's newest session attached for the purpose) and the session's record lock, in this order:
1. for each file forced over changes the session did not make: its content as a blob and an
   `external` file_change, so the state just before the rewind holds it;
2. a durable `rewind` lifecycle record (stage begin) with the plan — before any file is touched;
3. the files, each through a temp file and a rename (`recovery.rewind.execute`);
4. one `rewind` file_change per file written or deleted (which makes the verifier stale), then a
   durable `rewind` lifecycle record (stage end) with the outcomes.
A crash after 2 leaves a begin without an end: the next rewind of the thread first finishes it
(re-planning is idempotent: files already rewound are unchanged, and get their records).
`rewind --undo` rewinds the files the latest rewind changed to the seq just before its begin
(repeated, it walks back through earlier rewinds: `Rewinds.latest`); a file changed after that
rewind by anyone but a rewind is refused unless forced.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import ids
from .errors import InvalidEvent, UnknownVersion
from .events import Durability, Record, blob_refs

if TYPE_CHECKING:
    from .recovery.diff import FileDiff
    from .recovery.replay import Replayed
    from .recovery.rewind import FileOutcome, FileStep, RewindPlan, RewindResult
    from .recovery.state import SessionState
    from .schema import Event
    from .session import Session
    from .store.blobs import BlobStore, GcReport
    from .store.store import Store


@dataclass(frozen=True)
class RewindReport:
    """A rewind planned (dry run) or carried out: each file's step and, if executed, its outcome."""

    plan: RewindPlan
    result: RewindResult | None
    rewind_seq: int | None  # the seq of its begin record (None for a dry run)
    undo_of: int | None  # the begin seq of the rewind it undoes
    finished: int | None  # the begin seq of an interrupted rewind this call finished first
    undo_available: bool

    def outcome(self, path: str) -> FileOutcome | None:
        """What execution did to `path` (None for a dry run)."""
        if self.result is None:
            return None
        return next((o for o in self.result.outcomes if o.path == path), None)

    def steps(self) -> list[dict[str, Any]]:
        """Each file: {path, action, reason, outcome, before_hash, after_hash} (the wire's RewindStep)."""
        rows = []
        for step in self.plan.steps:
            done = self.outcome(step.path)
            after = step.target if step.action == "restore" else step.current \
                if step.action != "delete" else None
            rows.append({"path": step.path, "action": step.action,
                         "reason": done.reason if done is not None else step.reason,
                         "outcome": done.status if done is not None else None,
                         "before_hash": done.before if done is not None else step.current,
                         "after_hash": done.after if done is not None else after})
        return rows

    @property
    def complete(self) -> bool:
        """True when nothing was refused, unavailable, stale or failed."""
        if any(s.action in ("refused", "unavailable") for s in self.plan.steps):
            return False
        return self.result is None or not self.result.with_status("stale", "failed")


class ContentActions:
    """Mixin of `Keeper`: the content store's actions on a thread (needs store, live, replay, attach)."""

    live: dict[str, Session]
    blob_cap_bytes: int | None
    allow_secret_files: bool

    @property
    def store(self) -> Store:  # provided by Keeper
        raise NotImplementedError

    def replay(self, thread_id: str, *, full: bool = False) -> Replayed:  # provided by Keeper
        raise NotImplementedError

    def attach(self, session_id: str) -> Session:  # provided by Keeper
        raise NotImplementedError

    def rows(self, *, workspace: str | None = None, include_archived: bool = False,
             cursor: tuple[str, str] | None = None, limit: int = 50) -> list[Any]:  # by Keeper
        raise NotImplementedError

    @property
    def blobs(self) -> BlobStore:
        """The store's blobs."""
        return self.store.blobs

    # ---- reading -----------------------------------------------------------------------------

    def diff(self, thread_id: str, *, from_seq: int | None = None, to_seq: int | None = None,
             path: str | None = None, squash: bool = False) -> list[FileDiff]:
        """Unified diffs of a thread's file versions after `from_seq` up to `to_seq`, with authors."""
        from .recovery.diff import diff_history

        history = _history(self.replay(ids.thread_id(thread_id)).state)
        return diff_history(history.files, blobs=self.blobs, from_seq=from_seq, to_seq=to_seq,
                            path=path, squash=squash)

    def blob(self, thread_id: str, key: str) -> bytes:
        """The content of a file version the thread's history names (BlobMissing / BlobCorrupt)."""
        from .errors import BlobMissing
        from .store.blobs import check_key

        history = _history(self.replay(ids.thread_id(thread_id)).state)
        if check_key(key) not in history.hashes():
            raise UnknownVersion(f"thread {thread_id} names no file version {key[:16]}…")
        reason = history.not_kept(key)
        if reason is not None:
            raise BlobMissing(key, f"its content was never kept ({reason})")
        return self.blobs.get(key)

    # ---- rewind ---------------------------------------------------------------------------------

    def rewind(self, thread_id: str, *, to_seq: int | None = None,
               paths: Sequence[str] | None = None, dry_run: bool = False, force: bool = False,
               undo: bool = False) -> RewindReport:
        """Restore a thread's files to their versions at `to_seq` (or undo the latest rewind)."""
        thread = ids.thread_id(thread_id)
        if undo == (to_seq is not None):
            raise InvalidEvent("rewind: give either to_seq or undo")
        if to_seq is not None and to_seq < 0:
            raise InvalidEvent(f"to_seq: {to_seq} is negative")
        if dry_run:
            replayed = self.replay(thread)
            return self._rewind(None, replayed.state, workspace=str(replayed.meta["cwd"]),
                                to_seq=to_seq, paths=paths, force=force, undo=undo)
        with self._writable(thread) as session, session.exclusive():
            finished = self._finish_interrupted(session)
            report = self._rewind(session, session.state, workspace=session.workspace,
                                  to_seq=to_seq, paths=paths, force=force, undo=undo)
        return dataclasses.replace(report, finished=finished)

    @contextlib.contextmanager
    def _writable(self, thread: str) -> Iterator[Session]:
        """The thread's live session here, else its newest session attached (the writer lock)."""
        session = self.live.get(thread)
        if session is not None:
            yield session
            return
        rows = self.store.thread_sessions(thread)
        session = self.attach(rows[-1].session_id)
        try:
            yield session
        finally:
            session.close()

    def _finish_interrupted(self, session: Session) -> int | None:
        """Finish a rewind a crash interrupted (never forced again); its begin seq, or None."""
        from .recovery.subsystems.rewinds import Rewinds

        open_one = session.state.get(Rewinds).interrupted()
        if open_one is None:
            return None
        plan = self._plan(session.state, workspace=session.workspace, to_seq=open_one["to_seq"],
                          paths=open_one["paths"], force=False)
        self._execute(session, plan, begin_seq=open_one["seq"], undo_of=open_one["undo_of"],
                      paths=open_one["paths"], force=open_one["force"])
        return int(open_one["seq"])

    def _rewind(self, session: Session | None, state: SessionState, *, workspace: str,
                to_seq: int | None, paths: Sequence[str] | None, force: bool,
                undo: bool) -> RewindReport:
        from .recovery.subsystems.rewinds import Rewinds, changed

        undo_of = guard_after = None
        if undo:
            latest = state.get(Rewinds).latest()
            if latest is None:
                raise InvalidEvent("rewind --undo: no rewind of this thread changed a file")
            to_seq, paths = int(latest["seq"]) - 1, changed(latest)
            undo_of, guard_after = int(latest["seq"]), int(latest["end_seq"])
        assert to_seq is not None
        plan = self._plan(state, workspace=workspace, to_seq=to_seq, paths=paths, force=force,
                          guard_after=guard_after)
        if session is None:
            return RewindReport(plan, None, None, undo_of, None, _undo_available(state))
        self._save_forced(session, plan)
        begin = self._begin(session, plan, undo_of=undo_of, paths=paths)
        result = self._execute(session, plan, begin_seq=begin, undo_of=undo_of, paths=paths,
                               force=force)
        return RewindReport(plan, result, begin, undo_of, None, _undo_available(session.state))

    def _plan(self, state: SessionState, *, workspace: str, to_seq: int,
              paths: Sequence[str] | None, force: bool,
              guard_after: int | None = None) -> RewindPlan:
        """The rewind's plan from the history and the disk, with the Keeper's own refusals."""
        from .recovery.baseline import PathEscapesRoot, file_hash
        from .recovery.rewind import plan_rewind
        from .recovery.subsystems.file_history import norm_path
        from .recovery.versions import state_at

        history = _history(state).files
        if paths is not None:
            paths = sorted({norm_path(p) for p in paths})
        wanted = list(history) if paths is None else list(paths)
        current: dict[str, str | None] = {}
        escaping: set[str] = set()
        for path in wanted:
            try:
                current[path] = file_hash(workspace, path)
            except (PathEscapesRoot, OSError):
                escaping.add(path)
        targets = {v.hash for p in wanted if p in history and (v := state_at(history[p], to_seq))
                   and v.hash and v.hash != current.get(p)}
        plan = plan_rewind(history, to_seq=to_seq, current=current, paths=paths, force=force,
                           unreadable=self.blobs.unreadable(targets))
        return _guarded(plan, history, escaping=escaping, guard_after=guard_after, force=force,
                        allow_secret_files=self.allow_secret_files)

    def _save_forced(self, session: Session, plan: RewindPlan) -> None:
        """Keep each forced file's content (a blob and an `external` version) before the rewind."""
        from .recovery.rewind import read_regular
        from .store.blobs import content_key

        history = _history(session.state)
        events: list[Record | Event] = []
        for step in plan.changes():
            last = history.last(step.path)
            if not step.forced or (last is not None and last.get("hash") == step.current
                                   and not last.get("content")):
                continue  # nothing to force over, or already recorded with its content
            try:
                held = read_regular(Path(session.workspace) / step.path)
            except OSError:
                continue  # execute finds it too and fails that file alone
            if (content_key(held) if held is not None else None) != step.current:
                continue  # changed again since the plan: execute leaves it alone (stale)
            event: Record = {"type": "file_change", "path": step.path, "author": "external"}
            if held is None:
                event.update(deleted=True, change="delete")
            else:
                event.update(after_hash=self.blobs.put(held), content="stored", change="modify")
            events.append(event)
        if events:
            session.record_many(events, durability=Durability.DURABLE)

    def _begin(self, session: Session, plan: RewindPlan, *, undo_of: int | None,
               paths: Sequence[str] | None) -> int:
        from .schema import Lifecycle, RewindInfo

        assert plan.to_seq is not None
        what = f"undo of the rewind at seq {undo_of}" if undo_of is not None else \
            f"to seq {plan.to_seq}"
        info = RewindInfo(stage="begin", to_seq=plan.to_seq, undo_of=undo_of,
                          paths=sorted(paths) if paths is not None else None, force=plan.force,
                          planned={s.path: s.action for s in plan.steps})
        return session.record_own([Lifecycle(source="rewind", reason=what, rewind=info)])[0].seq

    def _execute(self, session: Session, plan: RewindPlan, *, begin_seq: int,
                 undo_of: int | None, paths: Sequence[str] | None, force: bool) -> RewindResult:
        """Carry the plan out, then record each file's new version and the end record."""
        from .recovery.rewind import execute
        from .schema import Lifecycle, RewindInfo

        assert plan.to_seq is not None
        result = execute(plan, workspace=session.workspace, blobs=self.blobs)
        history = _history(session.state)
        events = [_version(o, begin_seq) for o in result.outcomes
                  if o.status in ("written", "deleted")
                  or (o.status == "unchanged" and _unrecorded(history.last(o.path), o.after))]
        info = RewindInfo(stage="end", to_seq=plan.to_seq, undo_of=undo_of,
                          paths=sorted(paths) if paths is not None else None, force=force,
                          begin_seq=begin_seq, outcomes={o.path: o.status for o in result.outcomes})
        session.record_own([*events, Lifecycle(source="rewind", reason="done", rewind=info)])
        return result

    # ---- trailers ------------------------------------------------------------------------------

    def trailers(self, thread_id: str, *, coauthor: str | None = None) -> tuple[str, str]:
        """The commit trailers of a thread: `Co-authored-by:` (its agent) and `Agent-Session:`."""
        from .recovery.trailers import commit_trailers

        thread = ids.thread_id(thread_id)
        replayed = self.replay(thread)
        return commit_trailers(coauthor=_coauthor(coauthor, replayed.agent), thread_id=thread)

    def trail_commit(self, message_file: str, *, workspace: str, thread_id: str | None = None,
                     coauthor: str | None = None) -> tuple[str, ...]:
        """Add the trailers to a commit message if the staged change holds the thread's agent lines.

        The thread defaults to the latest one of `workspace`; returns the agent-authored paths.
        """
        from .recovery import trailers

        if thread_id is None:
            rows = self.rows(workspace=workspace, limit=1)
            if not rows:
                return ()
            thread_id = rows[0].thread_id
        replayed = self.replay(ids.thread_id(thread_id))
        return trailers.trail_commit(message_file, workspace=workspace,
                                     history=_history(replayed.state).files, read=self.blobs.get,
                                     coauthor=_coauthor(coauthor, replayed.agent),
                                     thread_id=thread_id)

    # ---- retention ------------------------------------------------------------------------------

    def blob_references(self) -> tuple[set[str], set[str]]:
        """(every blob a rollout names as stored, archived ones included; what live threads need)."""
        from .recovery.replay import replay
        from .store.reader import read_rollout

        referenced: set[str] = set()
        live: dict[str, list[Any]] = {}
        for path, archived in self.store.layout.scan_rollouts():
            rollout = read_rollout(Path(path))
            for record in rollout.records:
                referenced.update(blob_refs(record))
            if not archived and rollout.meta is not None:
                live.setdefault(str(rollout.meta["thread_id"]), []).append(rollout)
        protect: set[str] = set()
        for rollouts in live.values():
            rollouts.sort(key=lambda r: int(r.meta["seq"]) if r.meta else 0)
            protect |= _history(replay(rollouts).state).needed()
        return referenced, protect

    def gc(self, *, cap_bytes: int | None = None, dry_run: bool = False,
           min_age_s: float = 3600.0) -> GcReport:
        """Remove blobs no rollout names; over the cap, the least recently used unprotected ones."""
        for session in list(self.live.values()):
            if session.writer.recorder.read_only_reason is None:
                session.flush()  # buffered records name blobs too
        referenced, protect = self.blob_references()
        cap = cap_bytes if cap_bytes is not None else self.blob_cap_bytes
        return self.blobs.gc(referenced, cap_bytes=cap, protect=protect, min_age_s=min_age_s,
                             dry_run=dry_run)


def _history(state: SessionState) -> Any:
    from .recovery.subsystems.file_history import FileHistory

    return state.get(FileHistory)


def _coauthor(given: str | None, agent: str) -> Any:
    """The identity to credit: given as `Name <email>`, else $SESSIONKEEPER_COAUTHOR, else the agent's."""
    from .recovery.trailers import KNOWN_AGENTS, Coauthor

    text = given or os.environ.get("SESSIONKEEPER_COAUTHOR")
    if text:
        name, _, rest = text.partition("<")
        if not rest.endswith(">") or not name.strip():
            raise InvalidEvent(f"coauthor: expected 'Name <email>', not {text!r}")
        return Coauthor(name.strip(), rest[:-1].strip())
    return KNOWN_AGENTS.get(agent) or Coauthor("AI agent", "agent@sessionkeeper.invalid")


def _guarded(plan: RewindPlan, history: Mapping[str, Any], *, escaping: Iterable[str],
             guard_after: int | None, force: bool, allow_secret_files: bool) -> RewindPlan:
    """The plan with what the Keeper refuses besides the planner: escaping paths, secret files
    (never stored, so their deletion could not be undone) and, for an undo, later versions."""
    from .recovery.content import is_secret_file

    out_of_tree = set(escaping)
    steps: list[FileStep] = []
    for step in plan.steps:
        later = [v for v in history.get(step.path, []) if guard_after is not None
                 and v.get("seq") is not None and v["seq"] > guard_after
                 and v.get("author") != "rewind"]
        if step.path in out_of_tree:
            step = dataclasses.replace(step, action="unavailable",
                                       reason="it resolves outside the workspace")
        elif step.action not in ("restore", "delete"):
            pass
        elif is_secret_file(step.path) and not allow_secret_files:
            step = dataclasses.replace(step, action="unavailable", reason=(
                "a secrets file: its content is never stored, so the rewind could not be undone"))
        elif later and not force:
            step = dataclasses.replace(step, action="refused", reason=(
                f"changed at seq {later[0]['seq']} ({later[0].get('author', 'agent')}) after the "
                "rewind; --force keeps that content as a blob"))
        steps.append(step)
    return dataclasses.replace(plan, steps=tuple(steps))


def _version(outcome: FileOutcome, begin_seq: int) -> Record:
    """The `rewind` file_change recording what a rewind left in a file."""
    event: Record = {"type": "file_change", "path": outcome.path, "author": "rewind",
                     "rewind_seq": begin_seq}
    if outcome.before is not None:
        event.update(before_hash=outcome.before, before_content="stored")
    if outcome.after is None:
        event.update(deleted=True, change="delete")
    else:
        event.update(after_hash=outcome.after, content="stored",
                     change="create" if outcome.before is None else "modify")
    return event


def _unrecorded(last: Mapping[str, Any] | None, now: str | None) -> bool:
    """True if the disk holds `now` but the history's last version of the file says otherwise."""
    return last is not None and last.get("hash") != now


def _undo_available(state: SessionState) -> bool:
    """True if the thread has a finished rewind that changed a file (`rewind --undo` has work)."""
    from .recovery.subsystems.rewinds import Rewinds

    return state.get(Rewinds).latest() is not None
