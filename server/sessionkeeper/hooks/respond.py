"""What each hook event does: record into the agent session's journal, check, answer.

    SessionStart startup|clear|compact|fork   lifecycle + a real git baseline in the journal
    SessionStart resume                       the resume check of the journal against the cwd:
                                              ok → context; drift → context + user line
                                              (block-on-drift: as blocked); blocked → Codex stops,
                                              Claude is gated (its prompts are blocked)
    UserPromptSubmit                          the gate (and its acknowledgement prompt); when
                                              the turn may go on, when it started
    PreToolUse / PostToolUse(Failure)         spooled by the thin hook (`fast`); here only for a
                                              session without a journal, which starts it
    PreCompact / PostCompact / SessionEnd     lifecycle records

The journal is `Keeper.journal(agent, session id)`: Session Keeper's own native records of the
agent session, which the agent-thread check prefers over what the agent's log reconstructs.
Invariants: the verdict is the recovery contract's (`check_resume` of the journal thread; the
digest only proves `ok` faster, `digest`); the policy only decides what a drift verdict does; a
gate that cannot be read never blocks; every journal write leaves a fresh digest (or none); a
checked resume is answered even when its record cannot be written (a read-only or full store).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from . import answers, digest, state, telling
from .keeping import forget, keeper_of, remember
from .payload import TOOL_EVENTS, HookInput
from .policy import policy_started
from .proven import digest_of, told, verified

if TYPE_CHECKING:
    from ..api import Keeper
    from ..events import Source
    from ..recovery.report import Report
    from ..session.live import Session

_JOURNAL_WAIT_S = 3.0


def respond(hook: HookInput, *, store: str | None) -> answers.Answer:
    """The answer to one hook call (its records written before it returns)."""
    setting_now = policy_started(hook.cwd)
    root = _root(store)
    resume = hook.event == "SessionStart" and hook.source == "resume"
    # a resume reads its digest while `git config` answers; nothing is written before the policy
    proven = digest_of(hook, root) if resume else None
    setting = setting_now()
    if setting.policy == "off":
        return answers.nothing("off")
    if hook.event == "UserPromptSubmit":
        return _prompt(hook, root, store)
    if resume:
        return _resume(hook, store, root, proven, block_drift=setting.policy == "block-on-drift",
                       note=setting.note)
    keeper = keeper_of(store)
    if hook.event == "SessionStart":
        return _start(hook, keeper, root)
    if hook.event in TOOL_EVENTS:  # a session without a journal (`fast` found no spool)
        from ..keeper.journal_fold import fold
        from ..keeper.journals import journal_root
        from .spooling import spool_call

        with _writing(keeper, hook, root) as journal:  # its journal, and so its spool, start
            spool_call(hook, store, policy="warn", catch_up=False)
            fold(journal, journal_root(root, hook.agent))
        return answers.nothing("recorded")
    source: Source = "shutdown" if hook.event == "SessionEnd" else "compact"
    detail = hook.reason if hook.event == "SessionEnd" else hook.trigger
    with _writing(keeper, hook, root) as journal:
        journal.transition(source, f"{hook.agent} {hook.event}" + (f" ({detail})" if detail else ""))
    return answers.nothing("recorded")


def _root(store: str | None) -> Path:
    from ..store.layout import Layout

    return Layout(store).root


@contextlib.contextmanager
def _writing(keeper: Keeper, hook: HookInput, root: Path) -> Iterator[Session]:
    """The agent session's journal, open for writing (created in the hook's cwd if new): what
    earlier hooks deferred is written first, and a fresh digest is left after it is closed (the
    old one is dropped first: a hook killed meanwhile leaves none, never a stale one)."""
    _forget(root, hook)
    journal = keeper.journal(hook.agent, hook.session_id,
                             workspace=hook.cwd if os.path.isdir(hook.cwd) else None,
                             wait_s=_JOURNAL_WAIT_S)
    try:
        for record in state.take_deferred(root, hook.agent, hook.session_id):
            journal.transition(record["source"], f"{record.get('reason', '')} (at {record.get('at')})",
                               decision=record.get("decision"))
        yield journal
    finally:
        journal.close()
    _remember(keeper, hook, root)


def _forget(root: Path, hook: HookInput) -> None:
    forget(root, hook.agent, hook.session_id)


def _remember(keeper: Keeper, hook: HookInput, root: Path) -> None:
    remember(keeper, root, hook.agent, hook.session_id)


def _has_journal(keeper: Keeper, hook: HookInput) -> bool:
    return bool(keeper.journal_rollouts(hook.agent, hook.session_id))


def _start(hook: HookInput, keeper: Keeper, root: Path) -> answers.Answer:
    """A new start, clear, compaction or fork: lifecycle and a fresh baseline."""
    existed = _has_journal(keeper, hook)
    with _writing(keeper, hook, root) as journal:
        if existed or hook.source != "startup":
            journal.transition(hook.source or "startup",  # type: ignore[arg-type]  # a Source
                               f"{hook.agent} SessionStart ({hook.source})")
        if existed:
            _refresh(journal, hook)
    return answers.nothing("recorded")


def _refresh(journal: Session, hook: HookInput) -> None:
    """Record the git baseline of the hook's cwd as it is now (where the agent runs now)."""
    from ..events import plain
    from ..recovery.baseline import capture

    now = capture(hook.cwd) if os.path.isdir(hook.cwd) else None
    if now is not None:
        journal.record_built([{"type": "baseline", **plain(now)}])


def _resume(hook: HookInput, store: str | None, root: Path, proven: digest.Digest | None, *,
            block_drift: bool, note: str | None) -> answers.Answer:
    if proven is not None:
        return verified(hook, root, proven, note=note)
    lost: list[str] = []  # what could not be recorded: the answer is given all the same
    keeper, journaled, report = _checked(hook, store)
    if report is None:  # hooks came after the session started and its log cannot be read
        if not os.path.isdir(hook.cwd):
            return answers.nothing("unchecked", note=f"no record of this session and its cwd "
                                                     f"{hook.cwd} is gone: nothing checked")
        with _writing(keeper, hook, root) as journal:
            journal.transition("resume", f"{hook.agent} SessionStart (resume): first record of it")
        return answers.context("SessionStart", telling.first_record("a resume"), outcome="recorded")
    with _best_effort(lost):
        state.lift_gate(root, hook.agent, hook.session_id)  # a new resume decides afresh
    stops = report.verdict == "blocked" or (report.verdict == "drift" and block_drift)
    passed = False
    with _best_effort(lost):  # the next resume uses up an acknowledgement, whatever it says
        passed = state.take_pass(root, hook.agent, hook.session_id)
    if stops and not passed:
        return told(hook, _stop(hook, keeper, root, report, lost=lost, journaled=journaled,
                                 why="blocked" if report.verdict == "blocked"
                                 else "drift, and the policy is block-on-drift"), lost)
    if report.verdict == "ok" or not journaled:
        with _best_effort(lost), _writing(keeper, hook, root) as journal:  # a first session here
            journal.transition("resume", f"{report.verdict}: " + (
                "verified" if report.verdict == "ok" else "the model was told")
                + ("" if journaled else " (checked against the agent's log)"),
                decision=None if report.verdict == "ok" else "continue")
    if report.verdict == "ok":
        return told(hook, answers.context("SessionStart", telling.verified(report), outcome="ok",
                                           message=note), lost)
    text, message = telling.changed(report)
    if journaled:
        with _best_effort(lost):
            _continue(keeper, hook, root, report, reason=f"{report.verdict}: " + (
                "acknowledged" if stops else "the model was told"))
    return told(hook, answers.context("SessionStart", text, message=message,
                                       outcome=report.verdict), lost)


@contextlib.contextmanager
def _best_effort(lost: list[str]) -> Iterator[None]:
    """Record what a checked resume did, if the store lets us: a store that cannot be written
    (read-only, full, busy) loses the record (noted in `lost`), never the verdict's answer."""
    from ..errors import SessionKeeperError

    try:
        yield
    except (OSError, SessionKeeperError) as exc:
        lost.append(f"{getattr(exc, 'name', type(exc).__name__)}: {exc}")


def _checked(hook: HookInput, store: str | None) -> tuple[Keeper, bool, Report | None]:
    """(keeper, has a journal, the resume check): a store that cannot be written (read-only,
    full) is checked through a read-only Keeper, whose writes then fail (and are noted)."""
    def through(keeper: Keeper) -> tuple[Keeper, bool, Report | None]:
        journaled = _has_journal(keeper, hook)
        return keeper, journaled, _check(keeper, hook) if journaled else _log_report(hook)

    try:
        return through(keeper_of(store))
    except OSError:
        return through(keeper_of(store, read_only=True))


def _log_report(hook: HookInput) -> Report | None:
    """The resume check of the agent's own log (reconstructed facts), for a session that has no
    journal yet; None when the transcript cannot be read."""
    from ..errors import SessionKeeperError

    if not hook.transcript_path or not os.path.isfile(hook.transcript_path):
        return None
    path = Path(hook.transcript_path)
    top = "projects" if hook.agent == "claude" else "sessions"
    roots = [p.parent for p in path.parents if p.name in (top, "archived_sessions")]
    if not roots:
        return None
    try:
        from .. import agents
        from ..agents.base import AgentFile
        from ..recovery.assess import assess
        from ..recovery.baseline import current_workspace
        from ..recovery.sources import replay_with_journal

        reader = agents.get(hook.agent)
        log = reader.load(AgentFile(hook.agent, "session", path, roots[0]))
        replayed = replay_with_journal(log, [], agent=hook.agent)
        return assess(replayed, current_workspace(hook.cwd), thread_id=hook.session_id)
    except (SessionKeeperError, OSError, ValueError):
        return None


def _check(keeper: Keeper, hook: HookInput) -> Report:
    """The resume check of the journal thread against the hook's cwd (nothing written)."""
    return keeper.journal_keeper(hook.agent).check_resume(hook.session_id, workspace=hook.cwd)


def _continue(keeper: Keeper, hook: HookInput, root: Path, report: Report, *, reason: str) -> None:
    """Record that the session goes on here despite the report.

    Drift: the journal is resumed here the native way (a new journal session in the hook's cwd,
    with its baseline), so the next resume is compared with where the session now runs. Blocked
    (acknowledged): the journal stays with the repository it belongs to; only the decision is
    recorded, and the next resume here is stopped again.
    """
    if report.verdict != "drift":
        with _writing(keeper, hook, root) as journal:
            journal.transition("resume", reason + f" (going on in {hook.cwd})", decision="continue")
        return
    from ..errors import ThreadBusy

    _forget(root, hook)
    deadline = time.monotonic() + _JOURNAL_WAIT_S
    while True:
        try:
            _, session = keeper.journal_keeper(hook.agent).resume(
                hook.session_id, workspace=hook.cwd, decision="continue")
            break
        except ThreadBusy:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
    if session is not None:
        session.close()
    _remember(keeper, hook, root)


def _stop(hook: HookInput, keeper: Keeper, root: Path, report: Report, *, why: str,
          lost: list[str], journaled: bool = True) -> answers.Answer:
    reason, context = telling.refused(report, agent=hook.agent, session_id=hook.session_id, why=why)
    if hook.agent == "claude":
        with _best_effort(lost):
            state.set_gate(root, state.Gate(agent=hook.agent, session_id=hook.session_id,
                                            verdict=report.verdict, reason=reason, cwd=hook.cwd))
    if journaled:  # a journal is never started in a place the session must not go on in
        with _best_effort(lost), _writing(keeper, hook, root) as journal:
            journal.transition("resume", f"{report.verdict}: stopped by the hook ({why})",
                               decision="cancel")
    return answers.stop_session(hook.agent, reason, text=context)


def _prompt(hook: HookInput, root: Path, store: str | None) -> answers.Answer:
    """The gate: a gated session's prompts are blocked until acknowledged."""
    gate = state.gate_of(root, hook.agent, hook.session_id)
    if gate is None:
        state.note_turn(root, hook.agent, hook.session_id)  # where `drift_since` finds this turn
        return answers.nothing("ok")
    if " ".join((hook.prompt or "").split()).lower() == telling.ACK_PROMPT:
        state.lift_gate(root, hook.agent, hook.session_id)
        keeper = keeper_of(store)
        reason = f"{gate.verdict}: acknowledged in the session"
        if _has_journal(keeper, hook):
            _continue(keeper, hook, root, _check(keeper, hook), reason=reason)
        else:  # the user chose to go on here: the journal starts here
            with _writing(keeper, hook, root) as journal:
                journal.transition("resume", reason, decision="continue")
        return answers.block_prompt("Session Keeper: acknowledged — the session continues here "
                                    "(what changed was told to the model). Send your prompt again.")
    return answers.block_prompt(gate.reason)
