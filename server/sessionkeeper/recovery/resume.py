"""The resume orchestrator: read → validate baseline → restore → validate subsystems → verdict.

The verdict is decided from the log and the workspace alone; hooks run only after it is fixed,
so a failing or hanging hook can add context but never change it. A dry run changes nothing on
disk; a real resume quarantines torn tails and, when the verdict (or the user's decision) allows,
starts a new session with `resumed_from`, a lifecycle event with the decision, and a snapshot.
"""

from __future__ import annotations

import os
import time
from typing import Any

import orjson

from .. import ids
from ..errors import InvalidEvent, ThreadBusy, UnknownThread
from ..store.layout import ensure_private_dir
from ..store.repair import quarantine_tail
from .baseline import BLOCKING_KINDS, current_workspace, find_by_identity, verdict_of
from .replay import Replayed
from .report import BLOCKED_CHOICES, DRIFT_CHOICES, DifferenceOut, InvalidationOut, Report
from .subsystems.base import Difference

BASELINE_KINDS = frozenset({"cwd_missing", "other_repository", "relocated", "branch", "head"})
DECISIONS = frozenset({"continue", "switch_back", "fork", "cancel", "relocate", "export"})


def resolve_thread(keeper: Any, thread_id: str | None, *, workspace: str, latest: bool) -> str:
    """The thread to resume: the given id, or the latest one of the workspace."""
    if thread_id is not None:
        return ids.thread_id(thread_id)
    if not latest:
        raise UnknownThread("name a thread or ask for the latest one")
    rows = keeper.list(workspace=workspace, limit=1)
    if not rows:
        raise UnknownThread(f"no thread recorded for workspace {os.path.realpath(workspace)}")
    return rows[0]["thread_id"]


def _validate(replayed: Replayed, workspace: Any) -> tuple[list[Difference], list[Any]]:
    """Baseline first; only when it does not block are the other subsystems validated."""
    from .subsystems.base import Findings

    worktree = replayed.state["worktree"]
    baseline: Findings = worktree.validate(workspace, {})
    if any(d.kind in BLOCKING_KINDS for d in baseline.differences):
        return list(baseline.differences), []
    differences, invalidations = replayed.state.validate(workspace)
    rest = [d for d in differences if d.kind not in BASELINE_KINDS]
    return list(baseline.differences) + rest, invalidations


def build_report(keeper: Any, replayed: Replayed, *, thread_id: str, workspace: str,
                 requested: dict[str, Any] | None) -> Report:
    """Validate a replayed thread against the workspace and decide the verdict."""
    ws = current_workspace(workspace, requested=requested)
    differences, invalidations = _validate(replayed, ws)
    damaged = replayed.damaged + [
        {"session_id": None, "line": 0, "kind": u["status"], "reason": u["path"]}
        for u in replayed.unreadable]
    verdict = verdict_of(differences, damaged=bool(damaged))
    state = replayed.state
    summaries = state.summaries()
    ops = summaries["operations"]
    tails = [{"session_id": r.meta["session_id"], "path": str(r.path), "offset": r.tail.offset,
              "bytes": r.tail.length, "reason": r.tail.reason, "action": "would quarantine"}
             for r in replayed.rollouts if r.tail is not None]
    recorded_branch = (replayed.meta.get("baseline") or {}).get("branch")
    moved = _moved_to(replayed, ws.root) if any(d.kind == "cwd_missing" for d in differences) else None
    status = keeper.summary_of(state, replayed.meta)
    return Report(
        verdict=verdict, thread_id=thread_id, restored_to_seq=replayed.restored_to_seq,
        workspace=ws.root,
        differences=[DifferenceOut(**vars(d)) for d in differences],
        invalidated=[InvalidationOut(**vars(i)) for i in invalidations],
        in_doubt_operations=ops["in_doubt_operations"],
        duplicate_operations=ops["duplicate_deliveries"] + [
            {"status": "redelivered line", **d} for d in replayed.redelivered],
        rerun_verifier=any(i.subsystem == "verifier" for i in invalidations),
        quarantined=tails, damaged=damaged,
        choices={"ok": [], "drift": DRIFT_CHOICES, "blocked": BLOCKED_CHOICES}[verdict],
        switch_back=f"git checkout {recorded_branch}" if any(
            d.kind == "branch" for d in differences) and recorded_branch else None,
        relocate_to=moved, title=status["title"], todos=summaries["todos"], verifier=summaries["verifier"],
        cost=summaries["cost"], permissions=summaries["permissions"], model=summaries["model"],
        attribution=summaries["attribution"], context=summaries["context"],
    )


_MAX_CANDIDATES = 50


def _moved_to(replayed: Replayed, missing: str) -> str | None:
    """The recorded repository, found again among the directories next to where it was."""
    recorded = replayed.state["worktree"].recorded()
    if recorded is None or recorded.identity is None:
        return None
    parent = os.path.dirname(os.path.realpath(missing))
    while parent and not os.path.isdir(parent):
        parent = os.path.dirname(parent)
    try:
        names = sorted(os.listdir(parent))[:_MAX_CANDIDATES]
    except OSError:
        return None
    candidates = [os.path.join(parent, n) for n in names
                  if os.path.isdir(os.path.join(parent, n, ".git"))]
    return find_by_identity(recorded.identity, candidates)


def check(keeper: Any, thread_id: str | None, *, workspace: str, latest: bool = False,
          requested: dict[str, Any] | None = None) -> Report:
    """Dry run: the report a resume would give; nothing on disk changes."""
    thread = resolve_thread(keeper, thread_id, workspace=workspace, latest=latest)
    replayed = keeper.replay(thread)
    if not replayed.rollouts:
        return _unreadable_report(thread, replayed, workspace)
    return build_report(keeper, replayed, thread_id=thread, workspace=workspace,
                        requested=requested)


def _unreadable_report(thread: str, replayed: Replayed, workspace: str) -> Report:
    damaged = [{"session_id": None, "line": 0, "kind": u["status"], "reason": u["path"]}
               for u in replayed.unreadable]
    return Report(verdict="blocked", thread_id=thread, restored_to_seq=-1,
                  workspace=os.path.abspath(workspace), damaged=damaged, choices=["export"])


def resume(keeper: Any, thread_id: str | None, *, workspace: str, decision: str | None = None,
           latest: bool = False, requested: dict[str, Any] | None = None) -> tuple[Report, Any]:
    """Resume for real; returns (report, session or None)."""
    if decision is not None and decision not in DECISIONS:
        raise InvalidEvent(f"unknown decision {decision!r}: expected one of {sorted(DECISIONS)}")
    thread = resolve_thread(keeper, thread_id, workspace=workspace, latest=latest)
    try:
        lock = keeper.store.lock_thread(thread, purpose="resume it")
    except ThreadBusy:
        if decision not in ("fork", "export"):
            raise
        lock = None  # open elsewhere: forking or exporting only reads it (no quarantine)
    try:  # read, decide and continue under the writer lock: nothing can be appended meanwhile
        replayed = keeper.replay(thread)
        if not replayed.rollouts:
            return _unreadable_report(thread, replayed, workspace), None
        report = build_report(keeper, replayed, thread_id=thread, workspace=workspace,
                              requested=requested)
        if decision == "relocate" and report.verdict == "blocked" and report.relocate_to:
            if lock is not None:
                lock.release()
                lock = None  # the repository was found again: resume it there
            return resume(keeper, thread, workspace=report.relocate_to, decision="relocate",
                          requested=requested)
        report.decision = decision
        if lock is not None:
            cut = (_quarantine(keeper, r) for r in replayed.rollouts if r.tail is not None)
            report.quarantined = [entry for entry in cut if entry is not None]
        if decision == "export":
            report.export_path = _export(keeper, replayed, report)
            return report, None
        action = _action(report.verdict, decision)
        if action is None:
            return report, None
        session = keeper.continue_thread(
            replayed, workspace=workspace, source="fork" if action == "fork" else "resume",
            reason=_reason(report), decision=decision or "ok", fork=action == "fork",
            lock=None if action == "fork" else lock)
        if action != "fork":
            lock = None  # now held by the new session's writer
    finally:
        if lock is not None:
            lock.release()
    report.reset = _maybe_reset(keeper, session, replayed)
    run = getattr(session, "hook_run", None)
    if run is not None:
        report.hook_failures = run.failures
        report.hook_context = run.added_context
    report.continued = True
    report.session_id = session.session_id
    if action == "fork":
        report.new_thread_id = session.thread_id
    return report, session


def _maybe_reset(keeper: Any, session: Any, replayed: Replayed) -> str | None:
    """Apply the reset policy: an idle or daily boundary since the last activity → idle_reset."""
    from datetime import datetime, timezone

    records = replayed.latest.records
    last = (records[-1] if records else replayed.meta).get("ts")
    if not last:
        return None
    then = datetime.fromisoformat(last.replace("Z", "+00:00"))
    reason = keeper.reset_policy.due(then, datetime.now(timezone.utc))
    if reason is not None:
        keeper.transition(session, "idle_reset", reason)
    return reason


def _action(verdict: str, decision: str | None) -> str | None:
    """What a verdict plus a decision allows: "continue", "fork", or None (nothing continues)."""
    if decision == "fork":
        return "fork"
    if verdict == "ok" and decision in (None, "continue"):
        return "continue"
    if verdict == "drift" and decision in ("continue", "relocate"):
        return "continue"
    return None


def _reason(report: Report) -> str:
    if not report.differences:
        return "resumed: environment identical"
    kinds = ", ".join(sorted({d.kind for d in report.differences}))
    return f"resumed despite: {kinds}"


def _quarantine(keeper: Any, rollout: Any) -> dict[str, Any] | None:
    done = quarantine_tail(keeper.store, rollout, locked=True)
    if done is None:
        return None
    return {"session_id": done.session_id, "path": done.path, "offset": done.offset,
            "bytes": done.bytes, "reason": done.reason, "action": "quarantined"}


def _export(keeper: Any, replayed: Replayed, report: Report) -> str:
    """Write the restored state and the report to exports/ for use elsewhere."""
    folder = ensure_private_dir(keeper.store.layout.root / "exports")
    path = folder / f"{report.thread_id}-{int(time.time())}.json"
    data = {"meta": replayed.meta, "state": replayed.state.snapshot(), "report": report.to_json()}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    return str(path)
