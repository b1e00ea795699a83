"""The worktree subsystem restores the recorded baseline and compares it first (fixture: `repo`)."""

from __future__ import annotations

import shutil
from pathlib import Path

from sessionkeeper.recovery.subsystems.worktree import Worktree
from tests.conftest import git
from tests.unit._recovery import meta, workspace


def _restored(repo: Path) -> Worktree:
    sub = Worktree()
    sub.apply(meta(repo))
    return _roundtrip(sub)


def _roundtrip(sub: Worktree) -> Worktree:
    fresh = Worktree()
    fresh.restore(sub.snapshot())
    return fresh


def test_worktree_restores_the_recorded_baseline_from_session_meta(repo: Path) -> None:
    """Fixture: `repo` on fix/payment."""
    sub = _restored(repo)
    assert sub.recorded().branch == "fix/payment"
    assert sub.snapshot()["cwd"] == str(repo)


def test_worktree_finds_nothing_in_the_same_workspace(repo: Path) -> None:
    """Fixture: `repo`, unchanged."""
    assert _restored(repo).validate(workspace(repo), {}).differences == []


def test_worktree_reports_branch_drift_when_branch_switched(repo: Path) -> None:
    """Fixture: `repo` switched to main after the session started."""
    sub = _restored(repo)
    git(repo, "checkout", "-q", "main")
    diffs = sub.validate(workspace(repo), {}).differences
    assert [(d.kind, d.recorded, d.current) for d in diffs] == [("branch", "fix/payment", "main")]


def test_worktree_reports_cwd_missing_with_the_recorded_cwd(repo: Path) -> None:
    """Fixture: `repo`, deleted before resume."""
    sub = _restored(repo)
    shutil.rmtree(repo)
    diffs = sub.validate(workspace(repo), {}).differences
    assert [(d.kind, d.recorded) for d in diffs] == [("cwd_missing", str(repo))]


def test_worktree_outside_git_reports_another_directory_as_relocation(tmp_path: Path) -> None:
    """Fixture: two plain directories, no git."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    sub = Worktree()
    sub.apply(meta(first))
    assert sub.validate(workspace(first), {}).differences == []
    assert [d.kind for d in sub.validate(workspace(second), {}).differences] == ["relocated"]


def test_worktree_newest_session_meta_wins(repo: Path) -> None:
    """Fixture: `repo`, a resumed session's meta recorded on main."""
    sub = Worktree()
    sub.apply(meta(repo))
    git(repo, "checkout", "-q", "main")
    sub.apply(meta(repo, seq=10))
    assert sub.recorded().branch == "main" and sub.snapshot()["seq"] == 10
