"""The thin process of a tool hook: check the call, look at the files it touches, spool it, exit;
and of a resume its digest proves ok (`proven`), answered without the recovery stack.

`sessionkeeper hook <agent> PreToolUse|PostToolUse|PostToolUseFailure` runs here, importing only the
standard library and a few small modules of ours. It parses and checks the agent's JSON
(`payload.parse`), reads the files the call names at this moment (`capture`; after a shell call
also every file git lists as changed and every file the session knows, and git's HEAD), asks the
hook policy (kept for the session by `policy_cache`, else `git config`, started first and read
last), keeps the files' content as raw blobs
(`store.blob_stash`), redacts the agent's part of the call and appends one line to the session's
spool (`store.spool`). Validation against the session, the operation ledger, file history and
indexing happen when the journal is next read (`journal_fold`); a detached catch-up folds the spool
soon after a burst of calls (`catch_up`), so a resume finds it folded.

Invariants: as every hook (`entry`): exit status 0, nothing on stdout, at most one line of ours on
stderr, the hard time limit (SIGALRM: past it, exit 0 with one line), no network; a call is
acknowledged (this process exits) only once its line and blobs are durable; nothing is written
when the policy is `off` or the input is invalid. A session with no journal yet (its SessionStart
hook did not run) goes the full way once (`entry`), which creates the journal and its spool.
Every other SessionStart, and a resume the digest cannot vouch for, goes the full way too.
"""

from __future__ import annotations

import os
import sys

from ..errors import HookInputInvalid
from ..store.home import default_root
from .limits import budget_of
from .payload import MAX_STDIN, hook_args, parse
from .spooling import spool_call

try:  # the C module: `signal` wraps it in enums, whose import costs a hook ~2 ms
    import _signal  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - not CPython
    import signal as _signal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .payload import HookInput

POLICY_KEY = "sessionkeeper.hookPolicy"
ENV_POLICY = "SESSIONKEEPER_HOOK_POLICY"


def _say(text: str) -> None:
    try:
        os.write(2, (" ".join(text.split())[:600] + "\n").encode("utf-8", "replace"))
    except OSError:
        return


def _give_up(store: str | None, agent: str, event: str, budget: float) -> None:
    """Arm the hard limit: past it the process ends (exit 0, one line, the failure remembered for
    `hooks status` within half a second more), whatever it is doing."""
    def handler(_signum: int, _frame: object) -> None:
        _signal.signal(_signal.SIGALRM, lambda _s, _f: os._exit(0))  # the note may hang too
        _signal.setitimer(_signal.ITIMER_REAL, 0.5)
        _failed(store, agent, event, "failed", f"sessionkeeper hook {agent} {event}: gave up after "
                                               f"{budget:g} s (failed open: the agent goes on unchecked)")
        os._exit(0)

    _signal.signal(_signal.SIGALRM, handler)
    _signal.setitimer(_signal.ITIMER_REAL, budget)


def main(argv: list[str]) -> int:
    """Answer one tool hook call, or a SessionStart (a resume here when it can, else the full
    way); always 0."""
    try:
        store, agent, event = hook_args(argv)
    except HookInputInvalid:
        return _full()(argv)  # it says what is wrong, as for any event
    if event == "SessionStart" and agent not in ("claude", "codex"):
        return _full_way(argv, None)
    where = f"{agent} {event}"
    _give_up(store, agent, event, budget_of(event))
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN + 1) if sys.stdin is not None else b""
        hook = parse(agent, event, raw)
        if event == "SessionStart":
            return _resume(hook, store, argv, raw) if hook.source == "resume" \
                else _full_way(argv, raw)
        if not spool_call(hook, store, policy=_policy(hook, store)):
            return _full_way(argv, raw)
    except HookInputInvalid as exc:
        _failed(store, agent, event, "invalid", f"sessionkeeper hook {where}: ignored: {exc}")
    except Exception as exc:  # noqa: BLE001 - never a traceback to the agent
        name = getattr(exc, "name", None) or f"internal error {type(exc).__name__}"
        _failed(store, agent, event, "failed", f"sessionkeeper hook {where}: failed open "
                                               f"({name}: {exc})")
    return 0


def _failed(store: str | None, agent: str, event: str, outcome: str, note: str) -> None:
    """Say why on stderr and remember it for `hooks status` (the rare path: it may load more)."""
    _say(note)
    try:
        from pathlib import Path

        from .state import note_run

        note_run(Path(store or default_root()), agent, event=event, outcome=outcome,
                 session_id=None, note=note)
    except Exception:  # noqa: BLE001 - bookkeeping never fails a hook
        return


def _full_way(argv: list[str], raw: bytes | None) -> int:
    """A call the thin process does not answer: the full hook (`raw`: the stdin already read)."""
    _signal.setitimer(_signal.ITIMER_REAL, 0)
    return _full()(argv, stdin=raw)


def _full() -> Callable[..., int]:
    """The full hook's entry point, site-packages added first (it needs more than the stdlib)."""
    from .. import with_site

    with_site()
    from .entry import main as full

    return full


def _resume(hook: HookInput, store: str | None, argv: list[str], raw: bytes) -> int:
    """A resume answered here when its digest proves it ok (or the policy is off), else the full
    way; the answer on stdout, its note on stderr, the call remembered for `hooks status`."""
    from .proven import answer

    root = os.path.realpath(os.path.expanduser(store) if store else default_root())
    try:
        found = answer(hook, root)
    except Exception:  # noqa: BLE001 - the full way checks again, and says what is wrong
        found = None
    if found is None:
        return _full_way(argv, raw)
    out = found.stdout()
    try:
        if out and sys.stdout is not None:
            sys.stdout.buffer.write((out + "\n").encode("utf-8"))
            sys.stdout.buffer.flush()
    except OSError:  # BrokenPipeError too: the agent stopped reading
        pass
    if found.note:
        _say(found.note)
    from .state import note_run

    note_run(root, hook.agent, event=hook.event, outcome=found.outcome,
             session_id=hook.session_id, note=found.note)
    return 0


def _policy(hook: HookInput, store: str | None) -> object:
    """The hook policy's answer, started now: a string (set in the environment, or kept from the
    session's last call), or a started `git config` whose answer is kept (`policy_cache`)."""
    setting = os.environ.get(ENV_POLICY, "")
    if setting.strip():
        return setting
    from .policy_cache import answer

    root = os.path.join(store or default_root(), "journals", hook.agent)
    return answer(root, hook.session_id, hook.cwd, POLICY_KEY)
