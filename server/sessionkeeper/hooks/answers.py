"""What a hook prints, in each agent's own output format, and what each field really does.

Observed with Claude Code 2.1.332 and Codex CLI 0.171.0 (and checked in tests/e2e/agents/):
- `hookSpecificOutput.additionalContext` reaches the model in both (Claude: a system message,
  Codex: a developer message), and both replay it later;
- SessionStart `continue:false` + `stopReason` stops Codex (no model request) and is ignored by
  Claude, so Claude is stopped at its first UserPromptSubmit with `decision:"block"` (which both
  honour; Claude shows the reason, Codex shows it nowhere);
- `systemMessage` reaches no model: Claude shows it to the user as a warning (and stores it),
  Codex shows it nowhere — it is the user-facing line, and the same text goes into the context.
Invariant: an answer is one JSON object or nothing; context is cut to `MAX_CONTEXT` characters
(below Claude's 10,000-character cap and Codex's 2,500-token spill threshold).
"""

from __future__ import annotations

from .. import jsontext

TYPE_CHECKING = False  # standard library only: a resume its digest proves ok runs in a thin process
if TYPE_CHECKING:
    from typing import Any

MAX_CONTEXT = 6000
"""Characters of additionalContext at most; the rest is left to `sessionkeeper --check-resume`."""
_CUT = "\n[cut: run `sessionkeeper --check-resume` for the whole report]"


class Answer:
    """What one hook call prints: a JSON object on stdout (or nothing) and one note on stderr."""

    __slots__ = ("output", "note", "outcome")

    def __init__(self, *, output: dict[str, Any] | None = None, note: str | None = None,
                 outcome: str = "ok") -> None:
        """`outcome`: what happened, for `hooks status` (ok, recorded, context, stopped,
        blocked, off, failed…)."""
        self.output = output
        self.note = note
        self.outcome = outcome

    def with_note(self, note: str | None) -> Answer:
        """The same answer with another note."""
        return Answer(output=self.output, note=note, outcome=self.outcome)

    def stdout(self) -> str:
        """The text to print on stdout ("" for nothing)."""
        return jsontext.dumps(self.output, spaced=True) if self.output is not None else ""


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CONTEXT else text[:MAX_CONTEXT - len(_CUT)] + _CUT


def nothing(outcome: str = "ok", *, note: str | None = None) -> Answer:
    """An answer that changes nothing in the agent."""
    return Answer(outcome=outcome, note=note)


def context(event: str, text: str, *, message: str | None = None,
            outcome: str = "context") -> Answer:
    """Put `text` into the model's context (SessionStart / UserPromptSubmit); `message` for the user."""
    out: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": event,
                                                  "additionalContext": _cut(text)}}
    if message:
        out["systemMessage"] = message
    return Answer(output=out, outcome=outcome)


def stop_session(agent: str, reason: str, *, text: str) -> Answer:
    """Stop a session at SessionStart: Codex honours `continue:false`; Claude cannot be stopped
    there, so it gets the reason as context (its first prompt is then blocked by the gate)."""
    if agent == "codex":
        return Answer(output={"continue": False, "stopReason": reason, "systemMessage": reason},
                      outcome="stopped")
    return context("SessionStart", text, message=reason, outcome="gated")


def block_prompt(reason: str) -> Answer:
    """Block one prompt at UserPromptSubmit: no model request; Claude shows `reason`."""
    return Answer(output={"decision": "block", "reason": reason}, outcome="blocked")
