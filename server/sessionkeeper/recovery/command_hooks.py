"""Hooks that are commands: configured as data, run as a subprocess with the context on stdin.

    {"name": "project-notes", "sources": ["startup", "resume"], "order": 10,
     "command": ["cat", "NOTES.md"], "timeout_s": 5}

The command runs in the workspace, gets the lifecycle context as JSON on stdin, and what it
prints becomes added context. A non-zero exit or a timeout is a hook failure (recorded, isolated).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import annotated_types as at
import orjson

from ..constraints import check
from ..events import Source

if TYPE_CHECKING:  # the hooks are made when a Keeper is (a server's options only name specs)
    from .lifecycle import Hook, HookRegistry


@dataclass(frozen=True, kw_only=True)
class HookSpec:
    """A command hook as configured."""

    __pydantic_config__ = {"use_attribute_docstrings": True}
    name: Annotated[str, at.Len(1, 100)]
    """Unique among the hooks."""
    command: Annotated[list[str], at.Len(1, None)]
    """The argv to run (no shell)."""
    sources: list[Source] = field(default_factory=list)
    """The lifecycle sources it runs on."""
    order: int = 0
    """Hooks run in ascending order."""
    timeout_s: Annotated[float, at.Interval(ge=0.01, le=600)] = 5.0
    """Seconds before the command is killed and counted as failed."""

    def __post_init__(self) -> None:
        check(self)


def _plain(value: Any) -> Any:
    """The frozen (read-only) context back as JSON-able data."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        return [_plain(v) for v in value]
    return value


def command_hook(spec: HookSpec) -> Hook:
    """A Hook running `spec.command`."""

    def run(context: Mapping[str, Any]) -> str | None:
        cwd = context.get("workspace") or None
        done = subprocess.run(spec.command, input=orjson.dumps(_plain(context)), cwd=cwd,
                              capture_output=True, timeout=spec.timeout_s)
        if done.returncode != 0:
            err = done.stderr.decode(errors="replace").strip()[:500]
            raise RuntimeError(f"exit {done.returncode}: {err}")
        return done.stdout.decode(errors="replace").strip() or None

    from .lifecycle import Hook

    return Hook(spec.name, frozenset(spec.sources), spec.order, run, timeout_s=spec.timeout_s + 1.0)


def registry_from(specs: Iterable[HookSpec]) -> HookRegistry:
    """A HookRegistry holding a command hook for every spec (names must be unique)."""
    from .lifecycle import HookRegistry

    registry = HookRegistry()
    for spec in specs:
        registry.add(command_hook(spec))
    return registry
