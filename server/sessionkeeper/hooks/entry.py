"""The process an agent starts for each hook: `sessionkeeper hook [--store DIR] <agent> <event>`.

Invariants (the agent must never be broken by us): the exit status is always 0; stdout holds at
most the one JSON answer; stderr at most one line of ours, never a traceback; a watchdog thread
ends the process (exit 0, one line) when the event's hard time limit (`limits.BUDGET_S`, below
the timeout written into the agent's config) is reached, whatever the main thread is doing;
nothing is recorded for a call whose input is invalid. No network is ever used.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from ..errors import HookInputInvalid, SessionKeeperError
from . import answers
from .limits import budget_of
from .payload import MAX_STDIN, SHELL_TOOLS, HookInput, hook_args, parse


class _Watchdog:
    """Ends the process with exit 0 and one line once the hard time limit is reached."""

    def __init__(self, budget_s: float, where: str, on_timeout: Callable[[str], None]) -> None:
        self.lock = threading.Lock()
        self.done = False
        self.where = where
        self._on_timeout = on_timeout
        self._thread = threading.Thread(target=self._run, args=(budget_s,), daemon=True)
        self._stop = threading.Event()
        self._thread.start()

    def _run(self, budget_s: float) -> None:
        if self._stop.wait(budget_s):
            return
        with self.lock:
            if self.done:
                return
            self.done = True
            line = (f"sessionkeeper hook {self.where}: gave up after {budget_s:g} s (failed open: "
                    "the agent goes on unchecked)")
            _line(line)
            try:
                self._on_timeout(line)
            finally:
                os._exit(0)

    def finish(self) -> bool:
        """Claim the output; False when the watchdog already ended the call."""
        with self.lock:
            if self.done:
                return False
            self.done = True
        self._stop.set()
        return True


def _line(text: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, (" ".join(text.split())[:600] + "\n").encode("utf-8", "replace"))


def _look_ahead(hook: HookInput) -> None:
    """Start the git commands the call will ask now — a new session's start: its baseline and
    the changed files; a shell call's end: the changed files — so git answers while the
    recording modules load."""
    from ..recovery import queries

    if hook.event == "SessionStart" and hook.source == "startup":
        queries.look_ahead(hook.cwd, queries.HEAD, queries.ROOTS, queries.REMOTE, *queries.CHANGED)
    elif hook.event.startswith("PostToolUse") and hook.tool_name in SHELL_TOOLS:
        queries.look_ahead(hook.cwd, *queries.CHANGED)


def _stdin() -> bytes:
    data = sys.stdin.buffer.read(MAX_STDIN + 1) if sys.stdin is not None else b""
    return data


def main(argv: list[str], *, stdin: bytes | None = None) -> int:
    """Answer one hook call; always 0 (the agent is never told we failed by an exit status).
    `stdin`: the call's input when the thin tool hook (`fast`) has read it already."""
    try:
        store, agent, event = hook_args(argv)
    except HookInputInvalid as exc:
        _line(f"sessionkeeper hook: ignored: {exc}")
        return 0
    where = f"{agent} {event}"
    if agent == "hermes":
        return _hermes(store, event, where)
    root = _store_root(store)

    def timed_out(line: str) -> None:
        _note(root, agent, event, answers.nothing("failed", note=line), None)

    watchdog = _Watchdog(budget_of(event), where, timed_out)
    hook = None
    try:
        hook = parse(agent, event, _stdin() if stdin is None else stdin)
        _look_ahead(hook)
        from .respond import respond

        answer = respond(hook, store=store)
    except HookInputInvalid as exc:
        answer = answers.nothing("invalid", note=f"sessionkeeper hook {where}: ignored: {exc}")
    except SessionKeeperError as exc:
        answer = answers.nothing("failed", note=f"sessionkeeper hook {where}: failed open "
                                                f"({exc.name}: {exc})")
    except Exception as exc:  # never a traceback to the agent
        answer = answers.nothing("failed", note=f"sessionkeeper hook {where}: failed open "
                                                f"(internal error {type(exc).__name__}: {exc})")
    if not watchdog.finish():
        return 0
    _note(root, agent, event, answer, None if hook is None else hook.session_id)
    out = answer.stdout()
    try:
        if out and sys.stdout is not None:  # UTF-8 whatever the locale (the agents read UTF-8)
            sys.stdout.buffer.write((out + "\n").encode("utf-8"))
            sys.stdout.buffer.flush()
    except (BrokenPipeError, OSError):
        pass
    if answer.note:
        _line(answer.note)
    return 0


def _hermes(store: str | None, event: str, where: str) -> int:
    """Hermes Agent's shell hook (`hermes_hook.py`): its JSON answer on stdout, or nothing."""
    from .hermes_hook import BUDGET_S as HERMES_BUDGET_S
    from .hermes_hook import MAX_STDIN as HERMES_STDIN

    watchdog = _Watchdog(budget_of(event, limits={event: HERMES_BUDGET_S}), where, lambda line: None)
    from .hermes_hook import main as hermes

    try:
        data = sys.stdin.buffer.read(HERMES_STDIN) if sys.stdin is not None else b""
    except OSError:
        data = b""
    out = hermes(store, event, data)
    if not watchdog.finish():
        return 0
    try:
        if out and sys.stdout is not None:
            sys.stdout.buffer.write((out + "\n").encode("utf-8"))
            sys.stdout.buffer.flush()
    except (BrokenPipeError, OSError):
        pass
    return 0


def _store_root(store: str | None) -> Path | None:
    """The store's root directory (resolved before any work, so a timeout needs no import)."""
    try:
        from ..store.layout import Layout
        from . import state  # noqa: F401  (the watchdog's note needs it already imported)

        return Layout(Path(store) if store else None).root
    except Exception:
        return None


def _note(root: Path | None, agent: str, event: str, answer: answers.Answer,
          session_id: str | None) -> None:
    """Remember the call for `hooks status` (never fails the hook)."""
    if root is None or agent not in ("claude", "codex"):
        return
    try:
        from ..store import layout  # noqa: F401  (imported by _store_root already)
        from .state import note_run

        note_run(root, agent, event=event, outcome=answer.outcome, session_id=session_id,
                 note=answer.note)
    except Exception:  # bookkeeping only
        return
