"""Fixtures shared by the contract tests (the repository fixtures live in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper

from ..seed import crash, record_seed


@pytest.fixture
def seeded(store_dir, repo):
    """A crashed seed session in `repo`: (keeper, thread_id, session)."""
    keeper = Keeper(store_dir)
    session = record_seed(keeper, repo)
    crash(session)
    return keeper, session.thread_id, session


@pytest.fixture
def no_user_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An empty git config of the test's own and no hook policy in the environment."""
    (tmp_path / "gitconfig").write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.delenv("SESSIONKEEPER_HOOK_POLICY", raising=False)
    yield
