"""Agent formats (Codex CLI, Claude Code, ...): each module here registers one `Agent` by name.

Adding an agent is adding one module with an `Agent` subclass and a `register()` call at its end;
Session Keeper's own rollouts are the "native" source and are not an agent here. Importing this
package imports every agent module (they are light: no pydantic, GitPython or zstandard).
"""

from __future__ import annotations

import importlib
import pkgutil

from .agent import Agent
from .base import (
    AgentFile,
    AgentLogUnreadable,
    Changes,
    Checkpoint,
    LineDamage,
    LineTail,
    Read,
    SessionSummary,
)
from .registry import REGISTRY, register


def _load() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def get(name: str) -> Agent:
    """The agent called `name`; KeyError when there is none."""
    _load()
    return REGISTRY[name]


def names() -> list[str]:
    """The names of every known agent, sorted."""
    _load()
    return sorted(REGISTRY)


__all__ = ["Agent", "AgentFile", "AgentLogUnreadable", "Changes", "Checkpoint", "LineDamage", "LineTail",
           "Read", "SessionSummary", "get", "names", "register"]
