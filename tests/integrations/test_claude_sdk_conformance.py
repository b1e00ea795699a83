"""The Claude Agent SDK's own SessionStore conformance suite, run against our store."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from claude_agent_sdk.testing import run_session_store_conformance  # noqa: E402
from claude_agent_sdk.testing.session_store_conformance import (  # noqa: E402
    _OPTIONAL_METHODS,
    _has_optional,
)

from sessionkeeper.integrations.claude_sdk import SessionKeeperSessionStore  # noqa: E402


@pytest.fixture
def fresh_store(tmp_path: Path) -> Iterator[Callable[[], SessionKeeperSessionStore]]:
    """A factory of stores, each on its own new temporary store directory."""
    made: list[SessionKeeperSessionStore] = []

    def make() -> SessionKeeperSessionStore:
        made.append(SessionKeeperSessionStore(Path(tempfile.mkdtemp(dir=tmp_path)) / "store"))
        return made[-1]

    yield make
    for store in made:
        store.close()


async def test_the_store_passes_all_14_contracts_with_no_optional_method_skipped(
        fresh_store: Callable[[], SessionKeeperSessionStore]) -> None:
    """Fixture: `fresh_store` (a new temporary store per contract)."""
    probe = fresh_store()
    assert all(_has_optional(probe, m, frozenset()) for m in _OPTIONAL_METHODS)
    await run_session_store_conformance(fresh_store)
