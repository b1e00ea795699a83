"""The agents known by name (`agents.registry`, `agents.AGENT_MODULES`): one module per agent."""

from __future__ import annotations

from sessionkeeper import agents
from tests.unit._agents import AGENT_FIXTURES, files


def test_registry_knows_every_agent_by_name() -> None:
    """No fixture: one module per agent, found by name (the others are added beside these)."""
    assert {"claude", "codex", "hermes", "openclaw"} <= set(agents.names())
    assert [agents.get(n).name for n in agents.names()] == agents.names()
    assert files("codex", AGENT_FIXTURES / "claude/intact") == []


def test_every_module_defining_an_agent_is_in_agent_modules() -> None:
    """No fixture: each module of the package imported; the ones defining an Agent subclass."""
    import importlib
    import inspect
    import pkgutil

    defining = set()
    for info in pkgutil.iter_modules(agents.__path__):
        module = importlib.import_module(f"sessionkeeper.agents.{info.name}")
        if any(issubclass(value, agents.Agent) and value is not agents.Agent
               and value.__module__ == module.__name__
               for value in vars(module).values() if inspect.isclass(value)):
            defining.add(info.name)
    assert defining == set(agents.AGENT_MODULES)
