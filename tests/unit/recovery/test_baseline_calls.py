"""A baseline capture asks git as little as the comparison needs (issue 13), and says the same as
the step-by-step capture in every repository shape (fixture: `repo`, conftest; real git)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessionkeeper.recovery import baseline
from sessionkeeper.recovery.baseline import capture
from tests.conftest import git


def test_capture_asks_git_once_when_head_is_the_recorded_commit(
        repo: Path, git_calls: list[tuple[str, ...]]) -> None:
    """Fixture: `repo`; a first capture, then one given that capture as the known baseline."""
    first = capture(repo)
    assert first is not None and len(git_calls) == 3  # head, root commits, origin
    git_calls.clear()
    again = capture(repo, known=first)
    assert again == first
    assert len(git_calls) == 1


def test_capture_asks_for_the_identity_again_when_head_moved(
        repo: Path, git_calls: list[tuple[str, ...]]) -> None:
    """Fixture: `repo`, captured, then one more commit."""
    first = capture(repo)
    (repo / "new.py").write_text("x = 1\n")
    git(repo, "add", "new.py")
    git(repo, "commit", "-qm", "more")
    git_calls.clear()
    again = capture(repo, known=first)
    assert again is not None and first is not None
    assert again.head != first.head and again.identity == first.identity
    assert any(call[:1] == ("rev-list",) for call in git_calls)


def test_capture_never_computes_the_unused_dirty_fingerprint_by_default(
        repo: Path, git_calls: list[tuple[str, ...]]) -> None:
    """Fixture: `repo` with a modified file."""
    (repo / "payment.py").write_text("changed\n")
    got = capture(repo)
    assert got is not None and got.dirty is None
    assert not any(call[:1] == ("status",) for call in git_calls)


@pytest.mark.parametrize("shape", ["plain", "subdirectory", "detached", "linked worktree",
                                   "unborn", "origin with credentials"])
def test_one_call_capture_equals_the_step_by_step_capture(repo: Path, tmp_path: Path,
                                                          shape: str) -> None:
    """Fixture: `repo` in each shape: a subdirectory, a detached HEAD, a linked worktree, a
    repository without commits, an origin URL carrying a password."""
    where = repo
    if shape == "subdirectory":
        where = repo / "src"
        where.mkdir()
    elif shape == "detached":
        git(repo, "checkout", "-q", "--detach")
    elif shape == "linked worktree":
        where = tmp_path / "linked"
        git(repo, "worktree", "add", "-q", "-b", "side", str(where))
    elif shape == "unborn":
        where = tmp_path / "empty"
        where.mkdir()
        git(where, "init", "-q")
    elif shape == "origin with credentials":
        git(repo, "remote", "add", "origin", "https://user:secret@example.invalid/r.git")
    fast = capture(where)
    slow = baseline._capture_slowly(os.fspath(where), dirty=False)
    assert fast == slow
    assert fast is not None
    if shape == "linked worktree":
        assert fast.repo_root == os.path.realpath(repo) != fast.worktree
    if shape == "detached":
        assert fast.branch is None and fast.head
    if shape == "origin with credentials":
        assert fast.identity is not None and "secret" not in str(fast.identity.remote_url)


def test_a_first_capture_starts_the_identitys_calls_before_it_waits_for_head(
        repo: Path, git_events: list[tuple[str, tuple[str, ...]]]) -> None:
    """Fixture: `repo` with an origin, captured without a known baseline: the root commits and
    the origin are asked beside HEAD (three git processes at once), and say what they said one
    after the other."""
    git(repo, "remote", "add", "origin", "https://example.invalid/r.git")
    got = capture(repo)
    first_answer = next(i for i, (kind, _) in enumerate(git_events) if kind == "answer")
    assert sorted(args[0] for kind, args in git_events[:first_answer]) == [
        "config", "rev-list", "rev-parse"]
    assert len(git_events) == 6  # each started once, each answer waited for once
    assert got == baseline._capture_slowly(os.fspath(repo), dirty=False)
    assert got is not None and got.identity is not None
    assert got.identity.remote_url == "https://example.invalid/r.git"


def test_a_capture_outside_git_waits_for_the_calls_it_started(
        tmp_path: Path, git_events: list[tuple[str, tuple[str, ...]]]) -> None:
    """Fixture: a plain directory: nothing captured, no git process left unwaited (a zombie)."""
    assert capture(tmp_path) is None
    started = [args for kind, args in git_events if kind == "start"]
    answered = [args for kind, args in git_events if kind == "answer"]
    assert sorted(started) == sorted(answered)


def test_the_listing_cache_starts_the_root_commits_beside_head_only_when_it_knows_none(
        repo: Path, git_events: list[tuple[str, tuple[str, ...]]]) -> None:
    """Fixture: `repo`; a BaselineCache asked twice with entries that expire at once: the first
    look starts rev-list beside rev-parse, the second (HEAD unchanged) runs rev-parse only."""
    from sessionkeeper.keeper.listing import BaselineCache

    cache = BaselineCache(ttl=0)
    first = cache.get(str(repo))
    first_answer = next(i for i, (kind, _) in enumerate(git_events) if kind == "answer")
    assert sorted(args[0] for _, args in git_events[:first_answer]) == ["rev-list", "rev-parse"]
    git_events.clear()
    again = cache.get(str(repo))
    assert [(kind, args[0]) for kind, args in git_events] == [("start", "rev-parse"),
                                                            ("answer", "rev-parse")]
    assert again == first == capture(repo, remote=False)
