"""Our entries in an agent's hook config, and how long each hook may take.

Claude Code's `settings.json` and Codex's `hooks.json` share one shape:

    {"hooks": {"SessionStart": [{"matcher": "...", "hooks": [{"type": "command",
                                                              "command": "...", "timeout": 15}]}]}}

Session Keeper adds one group of its own per event, at the end of the event's list (so the
positions — and Codex's trust keys — of every other group stay as they were), and never touches a
group that is not its own. A group is ours when its only handler runs `sessionkeeper hook
<agent> <event>`. Pure functions over the parsed JSON; the files are read and written by `install`.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .limits import TIMEOUT_S
from .payload import EVENTS

EVENTS_OF = {"claude": EVENTS,
             "codex": tuple(e for e in EVENTS if e not in ("SessionEnd", "PostToolUseFailure"))}
"""The events each agent's hooks are installed for (Codex has no SessionEnd, and reports failed
tool calls in PostToolUse)."""
_TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


def hook_program() -> list[str]:
    """The argv prefix that runs this installation's `sessionkeeper` (absolute, no PATH needed)."""
    script = Path(sys.executable).parent / "sessionkeeper"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "sessionkeeper"]


def thin_program() -> list[str]:
    """The argv prefix the installed hooks run: this interpreter without `site` on the package's
    `__main__.py` (a hook starts ~4 ms sooner than through the console script)."""
    return [sys.executable, "-S", str(Path(__file__).resolve().parents[1] / MAIN)]


MAIN = "__main__.py"


def command_for(agent: str, event: str, *, program: Sequence[str],
                store: str | None = None) -> str:
    """The shell command of our hook for one event (with `--store` only when one was named)."""
    argv = [*program, "hook", *(["--store", store] if store else []), agent, event]
    return shlex.join(argv)


def group_for(agent: str, event: str, command: str) -> dict[str, Any]:
    """Our matcher group for one event (Claude's tool events match every tool with "*")."""
    group: dict[str, Any] = {}
    if agent == "claude" and event in _TOOL_EVENTS:
        group["matcher"] = "*"
    group["hooks"] = [{"type": "command", "command": command, "timeout": TIMEOUT_S[event]}]
    return group


def is_ours(group: object, agent: str, event: str) -> bool:
    """True when a matcher group is Session Keeper's hook for `agent`'s `event`."""
    if not isinstance(group, dict):
        return False
    handlers = group.get("hooks")
    if not isinstance(handlers, list) or len(handlers) != 1 or not isinstance(handlers[0], dict):
        return False
    command = handlers[0].get("command")
    if not isinstance(command, str):
        return False
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    head = argv[:-2]
    return argv[-2:] == [agent, event] and "hook" in head and any(map(_runs_us, head))


def _runs_us(token: str) -> bool:
    """A command's word that names Session Keeper: its console script or its `__main__.py`."""
    path = Path(token)
    return path.name == "sessionkeeper" or (path.name == MAIN and path.parent.name == "sessionkeeper")


def _events(config: dict[str, Any]) -> dict[str, Any]:
    hooks = config.get("hooks")
    return hooks if isinstance(hooks, dict) else {}


def ours(config: dict[str, Any], agent: str) -> dict[str, list[int]]:
    """Per event, the positions of our groups in the config's list for it."""
    out: dict[str, list[int]] = {}
    for event, groups in _events(config).items():
        if event in EVENTS and isinstance(groups, list):
            found = [n for n, g in enumerate(groups) if is_ours(g, agent, event)]
            if found:
                out[event] = found
    return out


def merged(config: dict[str, Any], agent: str, commands: dict[str, str]) -> dict[str, Any]:
    """The config with exactly one group of ours per event, running `commands[event]`.

    An existing group of ours with the same command stays where it is (so installing twice
    changes nothing); one with another command is replaced in place; a missing one is appended.
    """
    out = dict(config)
    hooks = dict(_events(config))
    for event, command in commands.items():
        groups = list(hooks.get(event) or []) if isinstance(hooks.get(event), list) else []
        mine = [n for n, g in enumerate(groups) if is_ours(g, agent, event)]
        wanted = group_for(agent, event, command)
        if mine:
            groups[mine[0]] = wanted
            groups = [g for n, g in enumerate(groups) if n not in mine[1:]]
        else:
            groups.append(wanted)
        hooks[event] = groups
    out["hooks"] = hooks
    return out


def without_ours(config: dict[str, Any], agent: str) -> dict[str, Any]:
    """The config with every group of ours removed (an event left without groups is dropped,
    and a `hooks` table left empty too)."""
    out = dict(config)
    hooks: dict[str, Any] = {}
    for event, groups in _events(config).items():
        if isinstance(groups, list):
            kept = [g for g in groups if not is_ours(g, agent, event)]
            if kept or not groups:
                hooks[event] = kept
        else:
            hooks[event] = groups
    if hooks:
        out["hooks"] = hooks
    else:
        out.pop("hooks", None)
    return out
