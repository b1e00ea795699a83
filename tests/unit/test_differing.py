"""git's list of the differing files, started ahead by a command that will need it (issue 13):
taken once, only for its own directory, never when stale (fixtures: `repo` from tests/conftest.py
and `git_calls`; real git)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from sessionkeeper.cli import main
from sessionkeeper.hooks.entry import _look_ahead
from sessionkeeper.hooks.payload import HookInput, parse
from sessionkeeper.recovery import differing, gitrun
from sessionkeeper.recovery.file_capture import differing_files
from tests.conftest import git


@pytest.fixture(autouse=True)
def _nothing_ahead() -> Iterator[None]:
    differing._ahead.clear()
    yield
    differing._ahead.clear()


def _listings(calls: list[tuple[str, ...]]) -> int:
    return sum("ls-files" in call for call in calls)


def test_a_looked_ahead_listing_is_taken_once(repo: Path,
                                              git_calls: list[tuple[str, ...]]) -> None:
    """Fixture: `repo` with one modified file; a file added after the first listing."""
    (repo / "payment.py").write_text("changed\n")
    differing.look_ahead(repo)
    assert list(differing_files(str(repo))) == ["payment.py"]
    assert _listings(git_calls) == 1 and not differing._ahead
    (repo / "new.txt").write_text("new\n")
    assert sorted(differing_files(str(repo))) == ["new.txt", "payment.py"]
    assert _listings(git_calls) == 2


def test_a_listing_looked_ahead_for_another_directory_is_not_taken(
        repo: Path, tmp_path: Path, git_calls: list[tuple[str, ...]]) -> None:
    """Fixture: `repo` and a second repository with its own untracked file."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "only-here.txt").write_text("x\n")
    differing.look_ahead(other)
    assert list(differing_files(str(repo))) == []
    assert list(differing_files(str(other))) == ["only-here.txt"]
    assert _listings(git_calls) == 2 and not differing._ahead


def test_a_stale_look_ahead_is_never_taken(repo: Path) -> None:
    """Fixture: `repo` with an untracked file; a listing looked ahead longer ago than FRESH_S."""
    (repo / "late.txt").write_text("x\n")

    def never() -> gitrun.GitResult:
        raise AssertionError("a stale listing was taken")

    differing._ahead[str(repo.resolve())] = (time.monotonic() - differing.FRESH_S - 1, never)
    assert differing.listing(repo) == b"late.txt\0"


def test_git_past_its_time_limit_is_a_failed_result(repo: Path) -> None:
    """Fixture: `repo` with an alias that sleeps longer than the limit given."""
    done = gitrun.started(repo, "-c", "alias.nap=!sleep 5", "nap", timeout_s=0.2)()
    assert not done.ok and "took over 0.2 s" in done.stderr


def test_start_lists_the_changed_files_before_it_loads_the_keeper(
        repo: Path, tmp_path: Path, git_calls: list[tuple[str, ...]],
        capsys: pytest.CaptureFixture[str]) -> None:
    """Fixture: `repo` with a modified file; `sessionkeeper start` run in this process."""
    (repo / "payment.py").write_text("changed\n")
    assert main(["start", "--workspace", str(repo), "--store", str(tmp_path / "store")]) == 0
    capsys.readouterr()
    assert "ls-files" in git_calls[0] and _listings(git_calls) == 1


def _hook(event: str, **fields: object) -> HookInput:
    raw = {"session_id": "7d3c1b2a-4e5f-4a6b-9c8d-1e2f3a4b5c6d", "cwd": "/", "hook_event_name": event,
           "transcript_path": "/t.jsonl", **fields}
    return parse("claude", event, orjson.dumps(raw))


@pytest.mark.parametrize(("hook", "ahead"), [
    (lambda: _hook("SessionStart", source="startup"), True),
    (lambda: _hook("PostToolUse", tool_name="Bash", tool_input={"command": "make"},
                   tool_use_id="toolu_1", tool_response=""), True),
    (lambda: _hook("PostToolUseFailure", tool_name="Bash", tool_input={"command": "make"},
                   tool_use_id="toolu_1", error="Exit code 2"), True),
    (lambda: _hook("SessionStart", source="resume"), False),
    (lambda: _hook("PreToolUse", tool_name="Bash", tool_input={"command": "make"},
                   tool_use_id="toolu_1"), False),
    (lambda: _hook("PostToolUse", tool_name="Edit", tool_input={"file_path": "/a"},
                   tool_use_id="toolu_1", tool_response={}), False),
], ids=["startup", "shell call", "failed shell call", "resume", "before a shell call", "edit"])
def test_a_hook_looks_ahead_only_when_it_will_list(hook: Callable[[], HookInput],
                                                   ahead: bool) -> None:
    """Each kind of hook call in `/` (a directory every machine has)."""
    _look_ahead(hook())
    assert bool(differing._ahead) is ahead
