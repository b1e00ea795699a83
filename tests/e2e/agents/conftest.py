"""Fixtures that run the real agents (installed from npm, pinned) against the fake model APIs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.agents.drive import Driver, install
from tests.e2e.agents.fake_models import FakeModel

API = {"codex": "openai", "claude": "anthropic"}
_EXES: dict[str, Path] = {}


def exe_of(agent: str) -> Path:
    """The agent's executable, installed once per test run (cached across runs)."""
    if agent not in _EXES:
        _EXES[agent] = install(agent)
    return _EXES[agent]


@pytest.fixture(scope="module", params=["codex", "claude"])
def started(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Driver]:
    """A real session of each agent: one prompt whose model reply is one shell call, then a text."""
    agent = request.param
    with FakeModel(API[agent]) as fake:
        driver = Driver(agent, exe_of(agent), tmp_path_factory.mktemp(f"real-{agent}"), fake)
        driver.run("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
        yield driver


@pytest.fixture(params=["codex", "claude"])
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Driver]]:
    """A factory of drivers of one agent (each in its own scratch dir), sharing one fake server."""
    agent = request.param
    with FakeModel(API[agent]) as fake:
        count = iter(range(100))
        yield lambda: Driver(agent, exe_of(agent), tmp_path / f"run{next(count)}", fake)
