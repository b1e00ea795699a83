"""The agents known by name: each agent module registers its one `Agent` here when imported."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .agent import Agent

REGISTRY: dict[str, Agent] = {}


def register(agent: Agent) -> Agent:
    """Make an agent known by its name; return it."""
    if agent.name in REGISTRY:
        raise ValueError(f"agent {agent.name!r} registered twice")
    REGISTRY[agent.name] = agent
    return agent
