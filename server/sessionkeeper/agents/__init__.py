"""Agent formats (Codex CLI, Claude Code, ...): each module here registers one `Agent` by name.

Adding an agent is adding one module with an `Agent` subclass and a `register()` call at its end;
Session Keeper's own rollouts are the "native" source and are not an agent here. Importing this
package imports every agent module (they are light: no pydantic, GitPython or zstandard).
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import Agent, AgentFile, AgentLogUnreadable, Checkpoint, LineDamage, LineTail, Read, SessionSummary

_REGISTRY: dict[str, Agent] = {}


def register(agent: Agent) -> Agent:
    """Make an agent known by its name; return it."""
    if agent.name in _REGISTRY:
        raise ValueError(f"agent {agent.name!r} registered twice")
    _REGISTRY[agent.name] = agent
    return agent


def _load() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def get(name: str) -> Agent:
    """The agent called `name`; KeyError when there is none."""
    _load()
    return _REGISTRY[name]


def names() -> list[str]:
    """The names of every known agent, sorted."""
    _load()
    return sorted(_REGISTRY)


__all__ = ["Agent", "AgentFile", "AgentLogUnreadable", "Checkpoint", "LineDamage", "LineTail", "Read",
           "SessionSummary", "get", "names", "register"]
