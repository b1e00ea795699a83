"""Hermes Agent's shell hooks: Session Keeper's resume check inside Hermes's own turn.

Hermes runs the commands its config.yaml names under `hooks:` with a JSON payload on stdin
(`hook_event_name`, `session_id`, `cwd`, `tool_name`, `extra`) and reads one JSON answer:

    pre_llm_call   the first call of a Hermes process on a session that already has history (a
                   `hermes --resume`, a gateway restart) checks the thread in the cwd: ok → a
                   context line; drift → the differences as context (the model reads them before
                   it acts); blocked (another repository, or the chat answered by another user
                   than the one it was with) → a context line saying so, and
    pre_tool_call  every tool call of that session in that process is blocked
                   (`{"decision": "block", "reason": …}`) until Hermes is started where it belongs.
A fresh session is never checked. What was decided is kept per Hermes process
(`<store>/hooks/hermes/<session>.<pid>.json`), so a later turn costs one small read. Fail open:
any error answers nothing (Hermes goes on unchecked); nothing is written under Hermes's home.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

BUDGET_S = 45.0
"""The hook's hard time limit (the config snippet gives Hermes a 60 s timeout: a resume check
imports Hermes's sessions first)."""
MAX_STDIN = 64 << 20
"""The most of a payload read (a pre_llm_call carries the conversation)."""


def _marker(root: Path, session: str) -> Path:
    safe = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return root / "hooks" / "hermes" / f"{safe}.{os.getppid()}.json"


def respond(payload: dict[str, Any], *, store: str | None) -> dict[str, Any]:
    """The answer to one Hermes hook call ({}: nothing to say)."""
    event = payload.get("hook_event_name")
    session = payload.get("session_id")
    if event not in ("pre_llm_call", "pre_tool_call") or not isinstance(session, str) or not session:
        return {}
    from ..store.layout import Layout

    marker = _marker(Layout(Path(store) if store else None).root, session)
    decided = _read(marker)
    if event == "pre_tool_call":
        if decided is not None and decided.get("verdict") == "blocked":
            return {"decision": "block", "reason": decided.get("reason") or "Session Keeper stopped "
                    "this resume"}
        return {}
    if decided is not None:
        return {}
    extra: dict[str, Any] = payload["extra"] if isinstance(payload.get("extra"), dict) else {}
    if extra.get("is_first_turn") is not False:  # Hermes: no history before this turn (or unsaid)
        _write(marker, {"verdict": "fresh"})
        return {}
    verdict, text = check(session, cwd=str(payload.get("cwd") or os.getcwd()), store=store,
                          platform=extra.get("platform"), sender=extra.get("sender_id"))
    _write(marker, {"verdict": verdict, "reason": text})
    return {"context": text}


def check(session: str, *, cwd: str, store: str | None, platform: object,
          sender: object) -> tuple[str, str]:
    """(verdict, what the model is told) of resuming a Hermes session in `cwd` for `sender`."""
    from ..agents.hermes import thread_of
    from ..agents.hermes_meta import hashed_user
    from ..agents.importer import AgentSources
    from ..api import Keeper

    keeper = Keeper(Path(store) if store else None, agents=AgentSources(agents=("hermes",)))
    keeper.import_agents(force=True)
    thread = thread_of(session)
    report = keeper.check_resume(thread, workspace=cwd)
    context = _context(keeper, thread)
    recorded, now = context.get("user"), hashed_user(sender)
    if context.get("chat") and recorded and now and recorded != now:
        return "blocked", (f"Session Keeper stopped this resume: session {session} is the "
                           f"{context.get('platform')} chat of another user ({recorded}), now "
                           f"answered for {now}; do not use its context or run tools for this "
                           "user — tell them to start a new session.")
    lines = [f"{d.kind}: {_shown(d.recorded)} -> {_shown(d.current)}"
             + (f" ({d.detail})" if d.detail else "") for d in report.differences]
    where = f"{platform}" if platform else "here"
    if report.verdict == "blocked":
        return "blocked", (f"Session Keeper stopped this resume of Hermes session {session} in "
                           f"{cwd}: " + "; ".join(lines) + ". Its context belongs to another "
                           "place: run no tools here; tell the user to resume it where it was "
                           "recorded (`sessionkeeper resume " + session + "` shows where).")
    if report.verdict == "drift":
        return "drift", ("Session Keeper: this resumed Hermes session changed since it was "
                         f"recorded ({where}, {cwd}): " + "; ".join(lines)
                         + ". Re-check what your earlier messages assumed before acting on them.")
    extra = "; ".join(report.notes[:2])
    return "ok", (f"Session Keeper: this resumed Hermes session checked ok in {cwd}"
                  + (f" ({extra})" if extra else "") + ".")


def _shown(value: object) -> str:
    """A difference's side in words (a repository: its folder)."""
    if isinstance(value, dict):
        return str(value.get("repo_root") or value.get("worktree") or value.get("branch") or "-")
    return "-" if value is None else str(value)


def _context(keeper: Any, thread: str) -> dict[str, Any]:
    """The recorded source context of the thread's main session ({} when unknown)."""
    try:
        replayed = keeper.replay_agent(thread)
    except Exception:  # noqa: BLE001 - a context we cannot read checks nothing more
        return {}
    agent = (replayed.meta.get("data") or {}).get("agent") or {}
    found = agent.get("source_context")
    return found if isinstance(found, dict) else {}


def _read(marker: Path) -> dict[str, Any] | None:
    try:
        found = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _write(marker: Path, decided: dict[str, Any]) -> None:
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        tmp = marker.with_suffix(".tmp")
        tmp.write_text(json.dumps(decided), encoding="utf-8")
        os.replace(tmp, marker)
    except OSError:
        return


def main(store: str | None, event: str, data: bytes) -> str:
    """The stdout of one call (never raises: a broken hook must not break Hermes)."""
    try:
        payload = json.loads(data.decode("utf-8", "replace")) if data.strip() else {}
        if not isinstance(payload, dict):
            return ""
        payload.setdefault("hook_event_name", event)
        answer = respond(payload, store=store)
    except Exception:  # noqa: BLE001 - fail open
        return ""
    return json.dumps(answer) if answer else ""
