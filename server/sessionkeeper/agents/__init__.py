"""Agent formats (Codex CLI, Claude Code, ...): each module here registers one `Agent` by name.

Adding an agent is adding one module with an `Agent` subclass and a `register()` call at its end,
and its name to `AGENT_MODULES`; Session Keeper's own rollouts are the "native" source and are not
an agent here. The first `get()` or `names()` imports the agent modules: discovery only (roots and
file patterns); each agent imports its translator when a file is parsed.

It may import recovery (beside it), store and the vocabulary; never session, the Keeper or a surface.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .agent import Agent
from .base import AgentFile, AgentLogUnreadable, Changes
from .registry import REGISTRY, register

if TYPE_CHECKING:
    from .reads import Checkpoint, LineDamage, LineTail, Read, SessionSummary

_READS = frozenset({"Checkpoint", "LineDamage", "LineTail", "Read", "SessionSummary"})
"""Re-exported from `reads.py` on first use (a listing creates none of these classes)."""

AGENT_MODULES = ("codex", "claude", "hermes", "openclaw")
"""The modules of this package that register an agent (a test keeps it complete)."""
_LOADED: list[bool] = []


def _load() -> None:
    if _LOADED:
        return
    for name in AGENT_MODULES:
        importlib.import_module(f"{__name__}.{name}")
    _LOADED.append(True)


def __getattr__(name: str) -> Any:
    """The values of a read (`reads.py`), imported when first asked for."""
    if name in _READS:
        from . import reads

        return getattr(reads, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get(name: str) -> Agent:
    """The agent called `name`; KeyError when there is none."""
    _load()
    return REGISTRY[name]


def names() -> list[str]:
    """The names of every known agent, sorted."""
    _load()
    return sorted(REGISTRY)


__all__ = ["AGENT_MODULES", "Agent", "AgentFile", "AgentLogUnreadable", "Changes", "Checkpoint",
           "LineDamage", "LineTail", "Read", "SessionSummary", "get", "names", "register"]
