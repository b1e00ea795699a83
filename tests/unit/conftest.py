"""Fixtures shared by the unit tests (the repository fixtures live in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sessionkeeper.recovery import gitrun


@pytest.fixture
def git_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, ...]]]:
    """Every git command run (the real git still runs: this only writes down the arguments)."""
    calls: list[tuple[str, ...]] = []
    real = gitrun.run

    def counted(cwd: Any, *args: str, stdin: bytes | None = None) -> gitrun.GitResult:
        calls.append(args)
        return real(cwd, *args, stdin=stdin)

    monkeypatch.setattr(gitrun, "run", counted)
    yield calls
