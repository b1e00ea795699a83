"""Facts an agent's log does not state (`data.unknown`) are never compared with the workspace (`repo`)."""

from __future__ import annotations

from pathlib import Path

from sessionkeeper.recovery.subsystems.file_history import FileHistory
from sessionkeeper.recovery.subsystems.worktree import Worktree
from tests.unit._recovery import edit, folded, meta, rec, workspace

UNKNOWN_CONTENT = {"unknown": ["after_hash"], "source": "claude Edit"}


def test_a_version_whose_content_is_unknown_is_not_compared_with_the_disk(repo: Path) -> None:
    """Fixture: `repo`, payment.py written by an agent whose log holds no hash, then edited again."""
    sub = folded(FileHistory, rec(1, "file_change", path="payment.py", data=UNKNOWN_CONTENT))
    (repo / "payment.py").write_text("whatever the agent wrote\n")
    assert sub.last("payment.py") == {"seq": 1, "hash": None, "author": "agent", "unknown": True}
    assert sub.validate(workspace(repo), {}).differences == []


def test_a_known_version_after_an_unknown_one_is_compared_again(repo: Path) -> None:
    """Fixture: `repo`, an unknown agent write, then a native write with its hash, then an external edit."""
    sub = folded(FileHistory, rec(1, "file_change", path="payment.py", data=UNKNOWN_CONTENT),
                 edit(repo, 2, "payment.py", "v2\n"))
    (repo / "payment.py").write_text("external\n")
    assert [d.kind for d in sub.validate(workspace(repo), {}).differences] == ["file_changed"]


def test_a_deletion_the_log_states_is_still_checked(repo: Path) -> None:
    """Fixture: `repo`, the agent deleted payment.py (known: absent), and it is back on disk."""
    sub = folded(FileHistory, rec(1, "file_change", path="payment.py", data={"source": "codex"}))
    assert [d.kind for d in sub.validate(workspace(repo), {}).differences] == ["file_changed"]


def test_a_head_the_log_does_not_state_is_not_drift(repo: Path) -> None:
    """Fixture: `repo` on fix/payment; the recorded baseline names the branch but no HEAD."""
    recorded = meta(repo)
    recorded["baseline"]["head"] = None
    recorded["data"] = {"unknown": ["head"]}
    sub = folded(Worktree, recorded)
    assert sub.validate(workspace(repo), {}).differences == []
    without_marker = folded(Worktree, {**recorded, "data": {}})
    assert [d.kind for d in without_marker.validate(workspace(repo), {}).differences] == ["head"]


def test_a_later_baseline_record_keeps_saying_what_it_does_not_know(repo: Path) -> None:
    """Fixture: `repo`; a baseline record (an agent's branch change) with no HEAD and the marker."""
    recorded = meta(repo)
    branch = rec(1, "baseline", repo_root=str(repo), worktree=str(repo), branch="other", head=None,
                 data={"unknown": ["head"]})
    kinds = [d.kind for d in folded(Worktree, recorded, branch).validate(workspace(repo), {}).differences]
    assert kinds == ["branch"]
