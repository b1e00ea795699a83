"""What an agent's hook sends on stdin, parsed and checked into one frozen `HookInput`.

Both agents send one JSON object (as the real CLIs do in tests/e2e/agents/): the session id,
the transcript path, the cwd and the event's name, plus per event the SessionStart `source`, the
prompt, the tool call (`tool_use_id` — Codex sends its `call_id` there — `tool_name`,
`tool_input`, `tool_response`, a failure's `error`), the compaction `trigger`, the SessionEnd
`reason`. Everything else is ignored. Invariant: a `HookInput` names a known agent and event, a
canonical lowercase UUID session id and an absolute cwd; anything else is a HookInputInvalid
saying exactly what is wrong, and nothing is recorded for it. Stdlib only, without `json` and `re`
(`jsontext`; re only for an input holding a surrogate escape) and without dataclasses (whose
module loads `inspect`): every tool call of the agent starts this.
"""

from __future__ import annotations

import os

from .. import jsontext
from ..errors import HookInputInvalid
from ..session.tool_calls import EDIT_TOOLS, SHELL_TOOLS, TODO_TOOLS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["AGENTS", "EDIT_TOOLS", "EVENTS", "MAX_STDIN", "SHELL_TOOLS", "START_SOURCES",
           "TODO_TOOLS", "TOOL_EVENTS", "USAGE", "HookInput", "hook_args", "parse", "session_id_of"]

AGENTS = ("claude", "codex")
"""The agents whose hooks Session Keeper answers."""
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
          "PreCompact", "PostCompact", "SessionEnd")
"""The hook events Session Keeper answers (Codex has neither SessionEnd nor PostToolUseFailure:
Claude Code reports a failed tool call — a command exiting non-zero — there, not in PostToolUse)."""
START_SOURCES = ("startup", "resume", "clear", "compact", "fork")
"""SessionStart's `source` values (Claude reports a fork as `fork` since v2.1.214)."""
MAX_STDIN = 32 << 20
"""Bytes of stdin read at most (a PostToolUse of a large tool result stays below this)."""
_HEX = frozenset("0123456789abcdefABCDEF")
_CALL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
"""The events of a tool call (answered by the thin hook, `hooks.fast`)."""
_SURROGATE_ESCAPE = rb"\\u[dD][89a-fA-F]"
_LONE_SURROGATE = "[\ud800-\udfff]"
"""Compiled only for an input that may hold a lone surrogate (no regex compiles at a hook's start)."""


def _escaped_surrogate(raw: bytes) -> bool:
    """True when the JSON text holds a `\\uD800`-`\\uDFFF` escape (re loaded only for it)."""
    import re

    return re.search(_SURROGATE_ESCAPE, raw) is not None


def _is_uuid(raw: str) -> bool:
    """True for 8-4-4-4-12 hex digits (either case)."""
    return (len(raw) == 36 and all(raw[i] == "-" for i in (8, 13, 18, 23))
            and set(raw[:8] + raw[9:13] + raw[14:18] + raw[19:23] + raw[24:]) <= _HEX)


class HookInput:
    """One hook call, checked: who calls, for which session and where, and the event's fields.

    A plain class (fields set once by `parse`, then only read), not a dataclass: see the module."""

    __slots__ = ("agent", "event", "session_id", "cwd", "transcript_path", "source", "prompt",
                 "tool_use_id", "tool_name", "tool_input", "tool_response", "error", "trigger",
                 "reason", "model", "permission_mode")

    agent: str
    event: str
    session_id: str
    """The agent's session id (canonical lowercase UUID): the key of Session Keeper's journal."""
    cwd: str
    """The directory the agent runs in (absolute)."""
    transcript_path: str | None
    source: str | None
    """SessionStart: startup, resume, clear, compact or fork."""
    prompt: str | None
    """UserPromptSubmit: what the user typed."""
    tool_use_id: str | None
    """Pre/PostToolUse(Failure): the agent's id of the call (Claude `toolu_…`, Codex `call_…`)."""
    tool_name: str | None
    tool_input: Any
    tool_response: Any
    error: str | None
    """PostToolUseFailure: what failed (e.g. "Exit code 3")."""
    trigger: str | None
    """Pre/PostCompact: manual or auto."""
    reason: str | None
    """SessionEnd: why the session ended."""
    model: str | None
    permission_mode: str | None

    def __init__(self, **fields: Any) -> None:
        for name in self.__slots__:
            object.__setattr__(self, name, fields.pop(name, None))
        if fields:
            raise TypeError(f"unknown HookInput fields: {sorted(fields)}")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"HookInput is read-only ({name})")

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__
                          if getattr(self, n) is not None)
        return f"HookInput({shown})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookInput) and all(
            getattr(self, n) == getattr(other, n) for n in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # holds JSON values (dicts): not hashable


USAGE = "usage: sessionkeeper hook [--store DIR] <claude|codex|hermes> <event>"


def hook_args(argv: list[str]) -> tuple[str | None, str, str]:
    """(--store, agent, event) from the argv after `hook`; HookInputInvalid for anything else."""
    rest, store = list(argv), None
    if rest[:1] == ["--store"] and len(rest) >= 2:
        store, rest = rest[1], rest[2:]
    elif rest[:1] and rest[0].startswith("--store="):
        store, rest = rest[0].split("=", 1)[1], rest[1:]
    if len(rest) != 2:
        raise HookInputInvalid(USAGE)
    return store, rest[0], rest[1]


def _text(data: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    """A string field; a required one must be a non-empty string, an optional one that is not a
    string is left out (informational fields never make a call invalid)."""
    value = data.get(key)
    if not required:
        return value if isinstance(value, str) else None
    if value is None:
        raise HookInputInvalid(f"field {key!r} is missing")
    if not isinstance(value, str):
        raise HookInputInvalid(f"field {key!r} is not a string ({type(value).__name__})")
    if not value:
        raise HookInputInvalid(f"field {key!r} is empty")
    return value


def session_id_of(raw: object) -> str:
    """The canonical lowercase form of a hook's session id; HookInputInvalid if it is no UUID."""
    if not isinstance(raw, str) or not _is_uuid(raw):
        shown = repr(raw) if len(repr(raw)) <= 60 else repr(raw)[:57] + "..."
        raise HookInputInvalid(f"session_id {shown} is not a UUID")
    return raw.lower()


def _without_lone_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate (JSON lets `\\ud83d` stand alone; node writes one for
    an emoji cut in half) replaced by U+FFFD, so it can be recorded as UTF-8."""
    if isinstance(value, str):
        import re

        return re.sub(_LONE_SURROGATE, "\ufffd", value)
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


def parse(agent: str, event: str, raw: bytes) -> HookInput:
    """The HookInput of one call of `agent`'s `event` hook with `raw` on stdin."""
    if agent not in AGENTS:
        raise HookInputInvalid(f"unknown agent {agent!r}: expected one of {', '.join(AGENTS)}")
    if event not in EVENTS:
        raise HookInputInvalid(f"unknown event {event!r}: expected one of {', '.join(EVENTS)}")
    if len(raw) > MAX_STDIN:
        raise HookInputInvalid(f"stdin holds more than {MAX_STDIN} bytes")
    if not raw.strip():
        raise HookInputInvalid("stdin is empty: expected the hook's JSON object")
    try:
        data = jsontext.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise HookInputInvalid(f"stdin is not JSON ({str(exc)[:80]})") from None
    if not isinstance(data, dict):
        raise HookInputInvalid(f"stdin is JSON {type(data).__name__}, not an object")
    if (b"\\ud" in raw or b"\\uD" in raw) and _escaped_surrogate(raw):
        try:
            data = _without_lone_surrogates(data)
        except RecursionError:
            raise HookInputInvalid("stdin nests too deeply to be recorded") from None
    named = data.get("hook_event_name")
    if named is not None and named != event:
        raise HookInputInvalid(f"hook_event_name {str(named)[:40]!r} is not the event {event!r} "
                               "this hook is installed for")
    cwd = _text(data, "cwd", required=True)
    assert cwd is not None
    if not os.path.isabs(cwd) or "\0" in cwd:
        raise HookInputInvalid(f"cwd {cwd[:80]!r} is not an absolute path")
    fields: dict[str, Any] = {
        "agent": agent, "event": event, "session_id": session_id_of(data.get("session_id")),
        "cwd": cwd, "transcript_path": _text(data, "transcript_path"),
        "model": _text(data, "model"), "permission_mode": _text(data, "permission_mode"),
    }
    if event == "SessionStart":
        source = _text(data, "source", required=True)
        if source not in START_SOURCES:
            raise HookInputInvalid(f"source {str(source)[:40]!r} is not one of "
                                   f"{', '.join(START_SOURCES)}")
        fields["source"] = source
    elif event == "UserPromptSubmit":
        fields["prompt"] = _text(data, "prompt") or ""
    elif event in TOOL_EVENTS:
        call = _text(data, "tool_use_id", required=True)
        if not (0 < len(str(call)) <= 64 and set(str(call)) <= _CALL_CHARS):
            raise HookInputInvalid(f"tool_use_id {str(call)[:70]!r} is not 1-64 characters of "
                                   "[A-Za-z0-9_-]")
        fields.update(tool_use_id=call, tool_name=_text(data, "tool_name", required=True),
                      tool_input=data.get("tool_input"), tool_response=data.get("tool_response"),
                      error=_text(data, "error"))
    elif event in ("PreCompact", "PostCompact"):
        fields["trigger"] = _text(data, "trigger")
    elif event == "SessionEnd":
        fields["reason"] = _text(data, "reason")
    return HookInput(**fields)
