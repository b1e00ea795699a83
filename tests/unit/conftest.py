"""Fixtures shared by the unit tests (the repository fixtures live in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sessionkeeper.recovery import gitrun


@pytest.fixture
def git_events(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, tuple[str, ...]]]]:
    """Every git command started and every wait for its answer, in order: ("start", args) and
    ("answer", args) (the real git still runs; `gitrun.run` starts one and waits at once)."""
    events: list[tuple[str, tuple[str, ...]]] = []
    real = gitrun.started

    def recorded(cwd: Any, *args: str, stdin: bytes | None = None, timeout_s: float | None = None
                 ) -> Callable[[], gitrun.GitResult]:
        events.append(("start", args))
        result = real(cwd, *args, stdin=stdin, timeout_s=timeout_s)

        def answer() -> gitrun.GitResult:
            events.append(("answer", args))
            return result()

        return answer

    monkeypatch.setattr(gitrun, "started", recorded)
    yield events


@pytest.fixture
def git_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, ...]]]:
    """Every git command run (the real git still runs: this only writes down the arguments)."""
    calls: list[tuple[str, ...]] = []
    real = gitrun.started

    def counted(cwd: Any, *args: str, stdin: bytes | None = None, timeout_s: float | None = None
                ) -> Callable[[], gitrun.GitResult]:
        calls.append(args)
        return real(cwd, *args, stdin=stdin, timeout_s=timeout_s)

    monkeypatch.setattr(gitrun, "started", counted)
    yield calls
