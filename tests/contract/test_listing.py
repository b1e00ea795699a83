"""Listing threads: summaries from the index with an estimated resume state per thread."""

from __future__ import annotations

from sessionkeeper.api import Keeper

from ..conftest import git, init_repo


def test_listing_estimates_ok_drift_and_blocked_without_reading_rollouts(store_dir, repo, tmp_path):
    """Fixture: three closed threads: on fix/payment, on another branch, in another repository."""
    keeper = Keeper(store_dir)
    keeper.start(repo, title="here").close()
    git(repo, "checkout", "-q", "-b", "other")
    keeper.start(repo, title="on other").close()
    git(repo, "checkout", "-q", "fix/payment")
    elsewhere = init_repo(tmp_path / "unrelated", {"f": "f"})
    foreign = keeper.start(elsewhere, title="foreign")
    foreign.close()
    (store_dir / "sessions").rename(store_dir / "away")  # listing must not read rollouts
    states = {t.title: t.state for t in keeper.threads(workspace=str(repo))}
    assert states == {"here": "ok", "on other": "drift"}
    listed = keeper.threads(workspace=str(repo), limit=1)
    assert [t.title for t in listed] == ["on other"]
    assert listed[0].forked_from is None and listed[0].archived is False
    assert listed[0].state_reason == "branch other → fix/payment"
    all_threads = {t.title: t.state for t in keeper.threads()}
    assert all_threads == {"here": None, "on other": None, "foreign": None}
    (store_dir / "away").rename(store_dir / "sessions")


def test_listing_estimates_blocked_when_another_repository_took_the_path(store_dir, tmp_path):
    """Fixture: a thread recorded in a repository later replaced by an unrelated one."""
    place = tmp_path / "project"
    for n in (1, 2):
        init_repo(place, {"f": f"repository {n}"}, message=f"root {n}")
        if n == 1:
            Keeper(store_dir).start(place, title="old repo").close()
            __import__("shutil").rmtree(place)
    assert [t.state for t in Keeper(store_dir).threads(workspace=str(place))] == ["blocked"]


def test_a_fork_is_titled_as_a_fork(store_dir, repo):
    """Fixture: a closed thread titled "fix payment", forked."""
    keeper = Keeper(store_dir)
    thread = keeper.start(repo, title="fix payment")
    thread.close()
    fork = keeper.fork(thread.thread_id)
    fork.close()
    titles = sorted(t.title for t in keeper.threads(workspace=str(repo)))
    assert titles == ["fix payment", "fix payment (fork)"]
    forked = next(t for t in keeper.threads(workspace=str(repo)) if t.title.endswith("(fork)"))
    assert forked.forked_from is not None and forked.forked_from["thread_id"] == thread.thread_id
