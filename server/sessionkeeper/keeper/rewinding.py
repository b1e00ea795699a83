"""Carrying out a rewind on a writable session: the plan, then the records and files in order.

One rewind, under the thread's writer lock and the session's record lock, in this order:
1. for each file forced over changes the session did not make: its content as a blob and an
   `external` file_change, so the state just before the rewind holds it;
2. a durable `rewind` lifecycle record (stage begin) with the plan — before any file is touched;
3. the files, each through a temp file and a rename (`recovery.rewind.execute`);
4. one `rewind` file_change per file written or deleted (which makes the verifier stale), then a
   durable `rewind` lifecycle record (stage end) with the outcomes.
A crash after 2 leaves a begin without an end: `finish_interrupted` (run first by the next rewind
of the thread) re-plans it, never forced — idempotent: files already rewound are unchanged and
get their records, as written from their last version (stored by the run before it replaced
them), so the finished rewind can be undone. An undo (`undo_target`) rewinds the files the latest
rewind changed to the seq just before its begin; a file changed after that rewind by anyone but a
rewind is refused unless forced. The Keeper's own refusals (`guarded`): paths resolving outside the workspace,
secret-named files (never stored, so deleting one could not be undone).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidEvent, InvalidWorkspace
from ..events import Durability, Record

if TYPE_CHECKING:
    from ..recovery.rewind import FileOutcome, FileStep, RewindPlan, RewindResult
    from ..recovery.state import SessionState
    from ..schema import Event
    from ..session.live import Session
    from ..store.blobs import BlobStore


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


def history_of(state: SessionState) -> Any:
    """The file history subsystem of a state."""
    from ..recovery.subsystems.file_history import FileHistory

    return state.get(FileHistory)


def undo_target(state: SessionState) -> tuple[int, list[str], int, int]:
    """(to_seq, paths, undo_of, guard_after) of `rewind --undo`; InvalidEvent if nothing to undo."""
    from ..recovery.subsystems.rewinds import Rewinds, changed

    latest = state.get(Rewinds).latest()
    if latest is None:
        raise InvalidEvent("rewind --undo: no rewind of this thread changed a file")
    return int(latest["seq"]) - 1, changed(latest), int(latest["seq"]), int(latest["end_seq"])


def plan(state: SessionState, *, workspace: str, to_seq: int, paths: Sequence[str] | None,
         force: bool, blobs: BlobStore, allow_secret_files: bool,
         guard_after: int | None = None) -> RewindPlan:
    """The rewind's plan from the history and the disk, with the Keeper's own refusals.

    InvalidWorkspace when the workspace is not a directory here (moved or deleted): its files would
    all look deleted, and a restore would create the old path anew.
    """
    from ..recovery.baseline import PathEscapesRoot, file_hash
    from ..recovery.rewind import plan_rewind
    from ..recovery.subsystems.file_history import norm_path
    from ..recovery.versions import state_at

    if not os.path.isdir(workspace):
        raise InvalidWorkspace(f"the workspace {workspace} is not a directory here: a rewind can "
                               "neither compare nor restore its files (nothing was changed)")
    history = history_of(state).files
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
    planned = plan_rewind(history, to_seq=to_seq, current=current, paths=paths, force=force,
                          unreadable=blobs.unreadable(targets))
    return guarded(planned, history, escaping=escaping, guard_after=guard_after, force=force,
                   allow_secret_files=allow_secret_files)


def carry_out(session: Session, planned: RewindPlan, *, blobs: BlobStore, undo_of: int | None,
              paths: Sequence[str] | None) -> tuple[int, RewindResult]:
    """Steps 1 to 4 of the module docstring; (the begin record's seq, what execution did)."""
    _save_forced(session, planned, blobs=blobs)
    begin = _begin(session, planned, undo_of=undo_of, paths=paths)
    return begin, _execute(session, planned, blobs=blobs, begin_seq=begin, undo_of=undo_of,
                           paths=paths, force=planned.force)


def finish_interrupted(session: Session, *, blobs: BlobStore, allow_secret_files: bool) -> int | None:
    """Finish a rewind a crash interrupted (never forced again); its begin seq, or None."""
    from ..recovery.subsystems.rewinds import Rewinds

    open_one = session.state.get(Rewinds).interrupted()
    if open_one is None:
        return None
    planned = plan(session.state, workspace=session.workspace, to_seq=open_one["to_seq"],
                   paths=open_one["paths"], force=False, blobs=blobs,
                   allow_secret_files=allow_secret_files)
    _execute(session, planned, blobs=blobs, begin_seq=open_one["seq"], undo_of=open_one["undo_of"],
             paths=open_one["paths"], force=open_one["force"], begun=open_one["planned"])
    return int(open_one["seq"])


def _save_forced(session: Session, planned: RewindPlan, *, blobs: BlobStore) -> None:
    """Keep each forced file's content (a blob and an `external` version) before the rewind."""
    from ..recovery.rewind import read_regular
    from ..store.blobs import content_key

    history = history_of(session.state)
    events: list[Record | Event] = []
    for step in planned.changes():
        last = history.last(step.path)
        if not step.forced or (last is not None and last.get("hash") == step.current
                               and not last.get("content")):
            continue  # nothing to force over, or already recorded with its content
        try:
            held = read_regular(Path(os.path.realpath(os.path.join(session.workspace, step.path))))
        except OSError:
            continue  # execute finds it too and fails that file alone
        if (content_key(held) if held is not None else None) != step.current:
            continue  # changed again since the plan: execute leaves it alone (stale)
        event: Record = {"type": "file_change", "path": step.path, "author": "external"}
        if held is None:
            event.update(deleted=True, change="delete")
        else:
            event.update(after_hash=blobs.put(held), content="stored", change="modify")
        events.append(event)
    if events:
        session.record_many(events, durability=Durability.DURABLE)


def _begin(session: Session, planned: RewindPlan, *, undo_of: int | None,
           paths: Sequence[str] | None) -> int:
    from ..schema import Lifecycle, RewindInfo

    assert planned.to_seq is not None
    what = f"undo of the rewind at seq {undo_of}" if undo_of is not None else \
        f"to seq {planned.to_seq}"
    info = RewindInfo(stage="begin", to_seq=planned.to_seq, undo_of=undo_of,
                      paths=sorted(paths) if paths is not None else None, force=planned.force,
                      planned={s.path: s.action for s in planned.steps})
    return session.record_own([Lifecycle(source="rewind", reason=what, rewind=info)])[0].seq


def _execute(session: Session, planned: RewindPlan, *, blobs: BlobStore, begin_seq: int,
             undo_of: int | None, paths: Sequence[str] | None, force: bool,
             begun: Mapping[str, str] | None = None) -> RewindResult:
    """Carry the plan out, then record each file's new version and the end record.

    `begun`: the actions an interrupted rewind planned ({path: action}), when this finishes it.
    """
    from ..recovery.rewind import execute
    from ..schema import Lifecycle, RewindInfo

    assert planned.to_seq is not None
    result = execute(planned, workspace=session.workspace, blobs=blobs)
    history = history_of(session.state)
    if begun is not None:
        result = _done_before(result, history, begun, blobs=blobs)
    events = [_version(o, begin_seq) for o in result.outcomes
              if o.status in ("written", "deleted")
              or (o.status == "unchanged" and _unrecorded(history.last(o.path), o.after))]
    info = RewindInfo(stage="end", to_seq=planned.to_seq, undo_of=undo_of,
                      paths=sorted(paths) if paths is not None else None, force=force,
                      begin_seq=begin_seq, outcomes={o.path: o.status for o in result.outcomes})
    session.record_own([*events, Lifecycle(source="rewind", reason="done", rewind=info)])
    return result


def _done_before(result: RewindResult, history: Any, begun: Mapping[str, str], *,
                 blobs: BlobStore) -> RewindResult:
    """`result` with each file the interrupted run had already rewound (now `unchanged`, the disk
    not its last version) as written or deleted, from that version: the interrupted run stored it
    as a blob before it replaced the file, so `--undo` puts it back."""
    outcomes = []
    for o in result.outcomes:
        last = history.last(o.path)
        if o.status == "unchanged" and begun.get(o.path) in ("restore", "delete") \
                and last is not None and _unrecorded(last, o.after) \
                and (last.get("hash") is None or last["hash"] in blobs):
            o = dataclasses.replace(o, status="deleted" if o.after is None else "written",
                                    reason="rewound by the interrupted run", before=last.get("hash"))
        outcomes.append(o)
    return dataclasses.replace(result, outcomes=tuple(outcomes))


def guarded(planned: RewindPlan, history: Mapping[str, Any], *, escaping: Iterable[str],
             guard_after: int | None, force: bool, allow_secret_files: bool) -> RewindPlan:
    """The plan with what the Keeper refuses besides the planner: escaping paths, secret files
    (never stored, so their deletion could not be undone) and, for an undo, later versions."""
    from ..recovery.content import is_secret_file

    out_of_tree = set(escaping)
    steps: list[FileStep] = []
    for step in planned.steps:
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
    return dataclasses.replace(planned, steps=tuple(steps))


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


def undo_available(state: SessionState) -> bool:
    """True if the thread has a finished rewind that changed a file (`rewind --undo` has work)."""
    from ..recovery.subsystems.rewinds import Rewinds

    return state.get(Rewinds).latest() is not None
