"""Hooks that are commands: configured as data, run as a subprocess with the context on stdin.

    {"name": "project-notes", "sources": ["startup", "resume"], "order": 10,
     "command": ["cat", "NOTES.md"], "timeout_s": 5}

The command runs in the workspace, gets the lifecycle context as JSON on stdin, and what it
prints becomes added context. A non-zero exit or a timeout is a hook failure (recorded, isolated).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from .lifecycle import Hook, HookRegistry


class HookSpecError(ValueError):
    """A hook configuration that cannot be used; the message says which field."""


def _plain(value: Any) -> Any:
    """The frozen (read-only) context back as JSON-able data."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        return [_plain(v) for v in value]
    return value


def command_hook(spec: Mapping[str, Any]) -> Hook:
    """A Hook running `spec["command"]` (an argv list); raises HookSpecError on a bad spec."""
    name, command = spec.get("name"), spec.get("command")
    if not isinstance(name, str) or not name:
        raise HookSpecError("hook: `name` must be a non-empty string")
    if not (isinstance(command, list) and command and all(isinstance(c, str) for c in command)):
        raise HookSpecError(f"hook {name!r}: `command` must be a non-empty list of strings")
    timeout = float(spec.get("timeout_s", 5.0))

    def run(context: Mapping[str, Any]) -> str | None:
        cwd = context.get("workspace") or None
        done = subprocess.run(command, input=orjson.dumps(_plain(context)), cwd=cwd,
                              capture_output=True, timeout=timeout)
        if done.returncode != 0:
            err = done.stderr.decode(errors="replace").strip()[:500]
            raise RuntimeError(f"exit {done.returncode}: {err}")
        return done.stdout.decode(errors="replace").strip() or None

    try:
        return Hook(name, frozenset(spec.get("sources", ())), int(spec.get("order", 0)), run,
                    timeout_s=timeout + 1.0)
    except (TypeError, ValueError) as exc:
        raise HookSpecError(str(exc)) from None


def registry_from(specs: Iterable[Mapping[str, Any]]) -> HookRegistry:
    """A HookRegistry holding a command hook for every spec."""
    registry = HookRegistry()
    for spec in specs:
        registry.add(command_hook(spec))
    return registry
