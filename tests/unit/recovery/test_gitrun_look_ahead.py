"""Git commands started early by a command that will ask them (issue 13): taken once, only for
the same command in the same directory, never when stale; which commands each command and hook
starts first (fixtures: `repo` from tests/conftest.py, `spawned` below; real git)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from sessionkeeper.cli import main
from sessionkeeper.hooks.entry import _look_ahead
from sessionkeeper.hooks.payload import HookInput, parse
from sessionkeeper.keeper.catalog import Catalog
from sessionkeeper.keeper.resuming import Recovery
from sessionkeeper.keeper.sessions import Sessions
from sessionkeeper.recovery import gitrun, queries
from sessionkeeper.recovery.file_capture import differing_files
from tests.conftest import git


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, ...]]]:
    """Every git process started, in order, looked ahead or not (the real git still runs)."""
    calls: list[tuple[str, ...]] = []
    real = gitrun._start

    def counted(cwd: Any, args: tuple[str, ...], stdin: bytes | None,
                timeout_s: float | None) -> Callable[[], gitrun.GitResult]:
        calls.append(args)
        return real(cwd, args, stdin, timeout_s)

    monkeypatch.setattr(gitrun, "_start", counted)
    gitrun._ahead.clear()
    yield calls
    gitrun._ahead.clear()


def test_a_looked_ahead_command_is_taken_once(repo: Path, spawned: list[tuple[str, ...]]) -> None:
    """Fixture: `repo` with one modified file; a file added after the first listing."""
    (repo / "payment.py").write_text("changed\n")
    queries.look_ahead(repo, *queries.CHANGED)
    assert list(differing_files(str(repo))) == ["payment.py"]
    assert spawned == [*queries.CHANGED] and not gitrun._ahead
    (repo / "new.txt").write_text("new\n")
    assert sorted(differing_files(str(repo))) == ["new.txt", "payment.py"]
    assert spawned == [*queries.CHANGED] * 2


def test_the_two_listings_side_by_side_are_the_one_listing_of_both(repo: Path) -> None:
    """Fixture: `repo` with a file modified, one deleted, untracked files in a
    new directory and with a non-ASCII name, and an ignored one."""
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "payment.py").write_text("changed\n")
    (repo / "test_payment.py").unlink()
    (repo / "new dir").mkdir()
    (repo / "new dir" / "a b.txt").write_text("x\n")
    (repo / "ünï.txt").write_text("x\n")
    (repo / "noise.log").write_text("x\n")
    one = subprocess.run(["git", "ls-files", "-z", "--modified", "--others", "--exclude-standard"],
                         cwd=repo, capture_output=True, check=True).stdout
    two = b"".join(gitrun.run(repo, *args).stdout for args in queries.CHANGED)
    assert two == one and one.count(b"\0") == 5
    assert sorted(differing_files(str(repo))) == [
        ".gitignore", "new dir/a b.txt", "payment.py", "test_payment.py", "ünï.txt"]


def test_a_command_looked_ahead_elsewhere_is_not_taken(repo: Path, tmp_path: Path,
                                                       spawned: list[tuple[str, ...]]) -> None:
    """Fixture: `repo` and a second repository with its own untracked file."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "only-here.txt").write_text("x\n")
    queries.look_ahead(other, *queries.CHANGED)
    assert list(differing_files(str(repo))) == []
    assert list(differing_files(str(other))) == ["only-here.txt"]
    assert len(spawned) == 4 and not gitrun._ahead


def test_another_command_in_the_same_directory_is_not_taken(repo: Path,
                                                             spawned: list[tuple[str, ...]]) -> None:
    """Fixture: `repo`; its root commits looked ahead, its HEAD asked."""
    queries.look_ahead(repo, queries.ROOTS)
    assert gitrun.run(repo, *queries.HEAD).ok
    assert spawned == [queries.ROOTS, queries.HEAD] and list(gitrun._ahead) == [
        (str(repo.resolve()), queries.ROOTS)]


def test_a_stale_look_ahead_is_never_taken(repo: Path, spawned: list[tuple[str, ...]]) -> None:
    """Fixture: `repo` with an untracked file; a listing looked ahead longer ago than FRESH_S."""
    (repo / "late.txt").write_text("x\n")

    def never() -> gitrun.GitResult:
        raise AssertionError("a stale answer was taken")

    for args in queries.CHANGED:
        gitrun._ahead[(str(repo.resolve()), args)] = (time.monotonic() - gitrun.FRESH_S - 1, never)
    assert list(differing_files(str(repo))) == ["late.txt"]


def test_git_past_its_time_limit_is_a_failed_result(repo: Path) -> None:
    """Fixture: `repo` with an alias that sleeps longer than the limit given."""
    done = gitrun.started(repo, "-c", "alias.nap=!sleep 5", "nap", timeout_s=0.2)()
    assert not done.ok and "took over 0.2 s" in done.stderr


def _marked(monkeypatch: pytest.MonkeyPatch, spawned: list[tuple[str, ...]], owner: type,
            name: str) -> None:
    """Write `(name,)` into `spawned` when `owner.name` is called: what git started before."""
    real = getattr(owner, name)

    def marked(self: Any, *args: Any, **kwargs: Any) -> Any:
        spawned.append((name,))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, marked)


@pytest.mark.parametrize(("command", "owner", "method", "first"), [
    (["start"], Sessions, "start", [queries.HEAD, queries.ROOTS, queries.REMOTE, *queries.CHANGED]),
    (["list", "--json"], Catalog, "threads", [queries.HEAD, queries.ROOTS]),
    (["--check-resume", "--latest"], Recovery, "check_resume", [queries.HEAD]),
], ids=["start", "list", "check-resume"])
def test_a_command_starts_what_it_asks_git_before_it_works_and_asks_nothing_twice(
        repo: Path, tmp_path: Path, spawned: list[tuple[str, ...]], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, command: list[str], owner: type, method: str,
        first: list[tuple[str, ...]]) -> None:
    """Fixture: `repo` with a modified file and a thread there; the command run in this
    process, its work marked (`list` captures the workspace's baseline only when it lists a
    thread there)."""
    (repo / "payment.py").write_text("changed\n")
    store = str(tmp_path / "store")
    assert main(["start", "--workspace", str(repo), "--store", store]) == 0
    spawned.clear()
    _marked(monkeypatch, spawned, owner, method)
    main([*command, "--workspace", str(repo), "--store", store])
    capsys.readouterr()
    assert spawned[:len(first) + 1] == [*first, (method,)] and not gitrun._ahead
    assert len(spawned) == len(set(spawned))


def _hook(event: str, **fields: object) -> HookInput:
    raw = {"session_id": "7d3c1b2a-4e5f-4a6b-9c8d-1e2f3a4b5c6d", "cwd": "/",
           "hook_event_name": event, "transcript_path": "/t.jsonl", **fields}
    return parse("claude", event, orjson.dumps(raw))


_BASH = {"tool_name": "Bash", "tool_input": {"command": "make"}, "tool_use_id": "toolu_1"}


@pytest.mark.parametrize(("hook", "ahead"), [
    (lambda: _hook("SessionStart", source="startup"),
     [queries.HEAD, queries.ROOTS, queries.REMOTE, *queries.CHANGED]),
    (lambda: _hook("PostToolUse", **_BASH, tool_response=""), [*queries.CHANGED]),
    (lambda: _hook("PostToolUseFailure", **_BASH, error="Exit code 2"), [*queries.CHANGED]),
    (lambda: _hook("SessionStart", source="resume"), []),
    (lambda: _hook("PreToolUse", **_BASH), []),
    (lambda: _hook("PostToolUse", tool_name="Edit", tool_input={"file_path": "/a"},
                   tool_use_id="toolu_1", tool_response={}), []),
], ids=["startup", "shell call", "failed shell call", "resume", "before a shell call", "edit"])
def test_a_hook_starts_only_what_it_will_ask(hook: Callable[[], HookInput],
                                             ahead: list[tuple[str, ...]],
                                             spawned: list[tuple[str, ...]]) -> None:
    """Each kind of hook call in `/` (a directory every machine has)."""
    _look_ahead(hook())
    assert [args for _cwd, args in gitrun._ahead] == ahead
