"""The server's per-workspace baseline cache: reused while HEAD's files are unchanged, never
stale after a commit, a branch switch or a checkout (fixture: `repo`, conftest; real git)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sessionkeeper.keeper.listing import BaselineCache
from sessionkeeper.recovery.baseline import capture
from tests.conftest import git


def test_a_cached_baseline_is_reused_without_running_git(
        repo: Path, git_calls: list[tuple[str, ...]]) -> None:
    """Fixture: `repo`; the same workspace asked twice."""
    cache = BaselineCache()
    first = cache.get(str(repo))
    calls = len(git_calls)
    assert cache.get(str(repo)) == first == capture(repo, remote=False)
    assert len(git_calls) == calls + 2  # only the direct capture above ran git


@pytest.mark.parametrize("move", ["commit", "switch branch", "detach", "packed refs"])
def test_the_cache_sees_head_move_at_once(repo: Path, move: str) -> None:
    """Fixture: `repo`, cached, then a commit / another branch / a detached HEAD / pack-refs
    followed by a new commit."""
    cache = BaselineCache(ttl=3600)
    before = cache.get(str(repo))
    if move == "commit":
        (repo / "more.py").write_text("x = 2\n")
        git(repo, "add", "more.py")
        git(repo, "commit", "-qm", "more")
    elif move == "switch branch":
        git(repo, "checkout", "-q", "-b", "other")
    elif move == "detach":
        git(repo, "checkout", "-q", "--detach")
    else:
        git(repo, "pack-refs", "--all")
        git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    after = cache.get(str(repo))
    assert after == capture(repo, remote=False) != before


def test_an_expired_entry_is_captured_again(repo: Path,
                                            git_calls: list[tuple[str, ...]]) -> None:
    """Fixture: `repo`; a cache whose entries live 0 seconds."""
    cache = BaselineCache(ttl=0)
    cache.get(str(repo))
    calls = len(git_calls)
    cache.get(str(repo))
    assert len(git_calls) == calls + 1  # HEAD asked again; the identity reused (same commit)


def test_invalidate_forgets_and_outside_git_is_never_cached(
        repo: Path, tmp_path: Path, git_calls: list[tuple[str, ...]]) -> None:
    """Fixture: `repo` and a plain directory."""
    cache = BaselineCache()
    cache.get(str(repo))
    cache.invalidate(str(repo))
    calls = len(git_calls)
    cache.get(str(repo))
    assert len(git_calls) > calls
    plain = tmp_path / "plain"
    plain.mkdir()
    assert cache.get(str(plain)) is None
    calls = len(git_calls)
    assert cache.get(str(plain)) is None
    assert len(git_calls) > calls


def test_a_listing_baseline_asks_no_origin_and_estimates_as_the_full_one(
        repo: Path, git_calls: list[tuple[str, ...]]) -> None:
    """Fixture: `repo` with an origin; the listing's baseline beside the full capture."""
    from sessionkeeper.keeper.listing import workspace_baseline

    git(repo, "remote", "add", "origin", "https://example.invalid/r.git")
    git_calls.clear()
    listed = workspace_baseline(str(repo))
    assert sorted(call[:1] for call in git_calls) == [("rev-list",), ("rev-parse",)]
    full = capture(repo)
    assert listed is not None and full is not None and listed.identity is not None
    assert full.identity is not None and full.identity.remote_url == "https://example.invalid/r.git"
    assert listed.identity.remote_url is None
    assert dataclasses.replace(listed, identity=full.identity) == full


def test_a_get_waits_for_the_capture_started_ahead_and_git_runs_once(
        repo: Path, git_events: list[tuple[str, tuple[str, ...]]]) -> None:
    """Fixture: `repo`; get_soon, then get: one rev-parse and one rev-list in all, the same
    baseline as a direct capture, cached (a second get runs no git)."""
    cache = BaselineCache(ttl=3600)
    cache.get_soon(str(repo))
    got = cache.get(str(repo))
    assert sorted(args[0] for kind, args in git_events if kind == "start") == [
        "rev-list", "rev-parse"]
    git_events.clear()
    assert cache.get(str(repo)) == got
    cache.get_soon(str(repo))  # a valid entry: nothing started
    assert git_events == []
    assert got == capture(repo, remote=False)


def test_a_capture_ahead_forgotten_meanwhile_is_not_kept(
        repo: Path, git_events: list[tuple[str, tuple[str, ...]]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: `repo`; a capture ahead held after git's HEAD look-up while the branch changes
    and the workspace is invalidated (the watcher saw HEAD move): the next get captures again
    rather than wait for it, and the held capture's stale answer, when it comes, is not cached."""
    import threading

    from sessionkeeper.keeper import listing

    entered, release = threading.Event(), threading.Event()
    real = listing.head_of

    def held(root: str) -> object:
        before = real(root)  # HEAD as it was, answered after the move
        entered.set()
        assert release.wait(10)
        return before

    monkeypatch.setattr(listing, "head_of", held)
    cache = BaselineCache(ttl=3600)
    cache.get_soon(str(repo))
    assert entered.wait(10)
    cache.invalidate(str(repo))
    monkeypatch.setattr(listing, "head_of", real)
    git(repo, "checkout", "-q", "-b", "moved")
    now = cache.get(str(repo))
    assert now is not None and now.branch == "moved"
    release.set()
    for thread in threading.enumerate():
        if thread.name == "sessionkeeper-baseline":
            thread.join(10)
    git_events.clear()
    assert cache.get(str(repo)) == now  # the entry of the get, not of the capture ahead
    assert git_events == []
