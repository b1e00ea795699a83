"""Git baseline capture and comparison against real repositories (fixture: `repo`, conftest)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sessionkeeper.events import RepoIdentity
from sessionkeeper.recovery.baseline import PathEscapesRoot, capture, file_hash
from sessionkeeper.recovery.comparison import blocks, compare, verdict_of
from sessionkeeper.recovery.identity import find_by_identity
from sessionkeeper.recovery.subsystems.base import Difference
from tests.conftest import git
from tests.unit._recovery import sha


def _git_tree(root: Path) -> dict[str, bytes]:
    """Every file under .git with its bytes."""
    out = {}
    for path in sorted((root / ".git").rglob("*")):
        if path.is_file():
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


def _kinds(diffs: list[Difference]) -> list[str]:
    return [d.kind for d in diffs]


def test_capture_records_branch_head_and_root_commit(repo: Path) -> None:
    """Fixture: `repo` on fix/payment, one commit, clean."""
    got = capture(repo)
    assert got is not None
    assert got.repo_root == got.worktree == os.path.realpath(repo)
    assert got.branch == "fix/payment"
    assert got.head == git(repo, "rev-parse", "HEAD")
    assert got.identity == RepoIdentity(root_commits=[got.head], remote_url=None)
    assert got.dirty is None


def test_capture_from_a_subdirectory_finds_the_repository_root(repo: Path) -> None:
    """Fixture: `repo` with a `src/` subdirectory."""
    (repo / "src").mkdir()
    got = capture(repo / "src")
    assert got is not None and got.worktree == os.path.realpath(repo)


def test_capture_returns_none_outside_git_or_for_a_missing_path(tmp_path: Path) -> None:
    """Fixture: a plain temporary directory."""
    assert capture(tmp_path) is None
    assert capture(tmp_path / "gone") is None


def test_dirty_fingerprint_follows_content_of_modified_files(repo: Path) -> None:
    """Fixture: `repo`, payment.py edited twice without staging."""
    (repo / "payment.py").write_text("v2\n")
    first = capture(repo, dirty=True).dirty
    (repo / "payment.py").write_text("v3\n")
    second = capture(repo, dirty=True).dirty
    assert first and second and first != second


def test_capture_reports_detached_head_as_no_branch(repo: Path) -> None:
    """Fixture: `repo` with HEAD detached at its commit."""
    git(repo, "checkout", "-q", "--detach")
    got = capture(repo)
    assert got.branch is None and got.head == git(repo, "rev-parse", "HEAD")


def test_capture_handles_a_repository_without_commits(tmp_path: Path) -> None:
    """Fixture: `git init` with no commit."""
    git(tmp_path, "init", "-q", "-b", "main")
    got = capture(tmp_path)
    assert got.branch == "main" and got.head is None and got.identity.root_commits == []


def test_capture_redacts_credentials_in_the_remote_url(repo: Path) -> None:
    """Fixture: `repo` whose origin URL embeds a token."""
    git(repo, "remote", "add", "origin", "https://user:s3cret@example.com/org/pay.git")
    assert capture(repo).identity.remote_url == "https://example.com/org/pay.git"


def test_capture_changes_nothing_in_the_repository(repo: Path) -> None:
    """Fixture: `repo` with an unstaged edit (status would normally refresh the index)."""
    (repo / "payment.py").write_text("changed\n")
    before = _git_tree(repo)
    capture(repo)
    assert _git_tree(repo) == before


def test_compare_is_empty_for_an_unchanged_workspace(repo: Path) -> None:
    """Fixture: `repo`, captured twice."""
    assert compare(capture(repo), capture(repo), cwd_exists=True) == []


def test_compare_reports_branch_when_branch_switched(repo: Path) -> None:
    """Fixture: `repo` switched from fix/payment to main (same commit)."""
    recorded = capture(repo)
    git(repo, "checkout", "-q", "main")
    diffs = compare(recorded, capture(repo), cwd_exists=True)
    assert diffs == [Difference("branch", "fix/payment", "main", "")]
    assert verdict_of(diffs) == "drift"


def test_compare_reports_head_when_a_commit_was_added(repo: Path) -> None:
    """Fixture: `repo` with one more commit on fix/payment."""
    recorded = capture(repo)
    git(repo, "commit", "-q", "--allow-empty", "-m", "more")
    diffs = compare(recorded, capture(repo), cwd_exists=True)
    assert _kinds(diffs) == ["head"] and diffs[0].recorded == recorded.head


def test_compare_blocks_when_cwd_is_missing(repo: Path) -> None:
    """Fixture: `repo`, then deleted."""
    recorded = capture(repo)
    shutil.rmtree(repo)
    diffs = compare(recorded, capture(repo), cwd_exists=repo.exists())
    assert _kinds(diffs) == ["cwd_missing"]
    assert verdict_of(diffs) == "blocked"


def test_compare_blocks_in_another_repository(repo: Path, tmp_path: Path) -> None:
    """Fixture: `repo` and an unrelated repository with its own root commit."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "fix/payment")
    git(other, "commit", "-q", "--allow-empty", "-m", "unrelated")
    diffs = compare(capture(repo), capture(other), cwd_exists=True)
    assert _kinds(diffs) == ["other_repository"] and verdict_of(diffs) == "blocked"


def test_compare_blocks_when_the_session_was_recorded_outside_git(repo: Path) -> None:
    """Fixture: `repo` resumed by a session recorded outside any repository."""
    diffs = compare(None, capture(repo), cwd_exists=True)
    assert _kinds(diffs) == ["other_repository"]


def test_moved_repository_is_offered_as_relocation_and_found_by_identity(
    repo: Path, tmp_path: Path
) -> None:
    """Fixture: `repo` moved to another path (same root commit)."""
    recorded = capture(repo)
    moved = tmp_path / "moved" / "repo-b"
    moved.parent.mkdir()
    shutil.move(repo, moved)
    diffs = compare(recorded, capture(moved), cwd_exists=True)
    assert diffs == [Difference("relocated", recorded.repo_root, os.path.realpath(moved),
                                "same repository at another path")]
    assert verdict_of(diffs) == "drift"
    candidates = [str(tmp_path / "nowhere"), str(tmp_path), str(moved)]
    assert find_by_identity(recorded.identity, candidates) == os.path.realpath(moved)


def test_find_by_identity_returns_none_when_no_candidate_matches(
    repo: Path, tmp_path: Path
) -> None:
    """Fixture: `repo` and candidates that are not it."""
    identity = capture(repo).identity
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "commit", "-q", "--allow-empty", "-m", "x")
    assert find_by_identity(identity, [str(other), str(tmp_path / "gone")]) is None


def test_linked_worktree_shares_repo_root_and_is_a_relocation(repo: Path, tmp_path: Path) -> None:
    """Fixture: `repo` plus a linked worktree on a new branch."""
    linked = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "wt-branch", str(linked))
    got = capture(linked)
    assert got.repo_root == os.path.realpath(repo) and got.worktree == os.path.realpath(linked)
    diffs = compare(capture(repo), got, cwd_exists=True)
    assert _kinds(diffs) == ["relocated", "branch"]


def test_file_hash_is_sha256_of_the_bytes_and_none_when_missing(repo: Path) -> None:
    """Fixture: `repo` (payment.py)."""
    text = (repo / "payment.py").read_text()
    assert file_hash(repo, "payment.py") == sha(text)
    assert file_hash(repo, str(repo / "payment.py")) == sha(text)
    assert file_hash(repo, "nope.py") is None
    assert file_hash(repo, ".") is None


def test_file_hash_refuses_paths_escaping_the_root(repo: Path, tmp_path: Path) -> None:
    """Fixture: `repo` with a symlink pointing outside it."""
    (tmp_path / "secret").write_text("x")
    (repo / "link").symlink_to(tmp_path / "secret")
    for bad in ("../secret", "link", str(tmp_path / "secret")):
        with pytest.raises(PathEscapesRoot):
            file_hash(repo, bad)


def test_verdict_is_ok_without_differences_and_blocked_on_damage() -> None:
    """Fixture: none (pure function)."""
    assert verdict_of([]) == "ok"
    assert verdict_of([], damaged=True) == "blocked"
    assert verdict_of([Difference("head"), Difference("cwd_missing")]) == "blocked"
    assert blocks(Difference("other_repository"))
    assert not blocks(Difference("relocated"))


def test_importing_baseline_does_not_import_git() -> None:
    """Fixture: a fresh interpreter."""
    code = ("import sys, sessionkeeper.recovery.baseline, sessionkeeper.recovery.state; "
            "sys.exit('git' in sys.modules)")
    server = str(Path(__file__).resolve().parents[3] / "server")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": server})
    assert done.returncode == 0
