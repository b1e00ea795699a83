"""A resume its digest proves `ok`: answered from the digest, without the recovery stack.

The full way (`respond`) and a hook's thin process (`fast`) give the same answer here: the gate
is lifted, an acknowledgement is used up, the lifecycle record is left for the journal's next
writer (`state.defer`), and the model is told what was verified. Whatever cannot be recorded is
said in the answer's note; the answer stands. Standard library only.
"""

from __future__ import annotations

import os

from ..errors import SessionKeeperError
from ..store import spool
from . import answers, digest, state, telling
from .policy import policy_started

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .payload import HookInput


def digest_of(hook: HookInput, root: str | os.PathLike[str]) -> digest.Digest | None:
    """The session's digest when it proves this resume `ok` (reads only), else None."""
    if spool.pending(os.path.join(root, "journals", hook.agent), hook.session_id):
        return None  # tool calls since the digest was taken: the journal must fold them first
    known = digest.load(root, hook.agent, hook.session_id)
    return known if known is not None and digest.proves_ok(known, hook.cwd) else None


def verified(hook: HookInput, root: str | os.PathLike[str], known: digest.Digest, *,
             note: str | None) -> answers.Answer:
    """The answer to a resume `known` proves ok (`note`: the policy's, for the user)."""
    lost: list[str] = []  # what could not be recorded: the answer is given all the same
    try:
        state.lift_gate(root, hook.agent, hook.session_id)  # a new resume decides afresh
        state.take_pass(root, hook.agent, hook.session_id)  # and uses up an acknowledgement
        state.defer(root, hook.agent, hook.session_id, {"source": "resume",
                                                        "reason": "verified: ok"})
    except (OSError, SessionKeeperError) as exc:
        lost.append(f"{getattr(exc, 'name', type(exc).__name__)}: {exc}")
    return told(hook, answers.context("SessionStart", telling.verified_digest(known),
                                      outcome="ok", message=note), lost)


def told(hook: HookInput, answer: answers.Answer, lost: list[str]) -> answers.Answer:
    """The answer, with one line saying what of it could not be recorded."""
    if not lost:
        return answer
    line = (f"sessionkeeper hook {hook.agent} {hook.event}: checked, but not recorded "
            f"({lost[0]})")
    return answer.with_note(f"{answer.note} {line}" if answer.note else line)


def answer(hook: HookInput, root: str) -> answers.Answer | None:
    """A resume answered here: its digest proves it ok, or the policy is `off`; None when the
    full check must run (it asks everything again)."""
    setting_now = policy_started(hook.cwd)
    known = digest_of(hook, root)  # read while `git config` answers
    setting = setting_now()
    if setting.policy == "off":
        return answers.nothing("off")
    return verified(hook, root, known, note=setting.note) if known is not None else None
