"""How HEAD moved, in words, with short SHAs and commit subjects (advice.head_moved, real repos)."""

from __future__ import annotations

from pathlib import Path

from sessionkeeper.recovery.advice import head_moved
from tests.conftest import git


def test_head_moved_back_names_the_commits_the_checkout_lacks(repo: Path) -> None:
    """Fixture: `repo` (fix/payment); one commit there, then HEAD reset back to its parent."""
    before = git(repo, "rev-parse", "HEAD")
    (repo / "payment.py").write_text("v2\n")
    git(repo, "commit", "-qam", "round to cents")
    recorded = git(repo, "rev-parse", "HEAD")
    git(repo, "reset", "-q", "--hard", before)
    assert head_moved(str(repo), recorded, before) == (
        f"HEAD moved back 1 commit(s); the checkout lacks: {recorded[:7]} round to cents")


def test_diverged_heads_show_both_commits_with_their_subjects(repo: Path) -> None:
    """Fixture: `repo`; a commit on fix/payment and another on main after the fork point."""
    (repo / "payment.py").write_text("v2\n")
    git(repo, "commit", "-qam", "on the branch")
    recorded = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    (repo / "test_payment.py").write_text("t2\n")
    git(repo, "commit", "-qam", "on main")
    current = git(repo, "rev-parse", "HEAD")
    assert head_moved(str(repo), recorded, current) == (
        f"HEAD moved to another line of history: recorded {recorded[:7]} “on the branch”, "
        f"now {current[:7]} “on main”")
