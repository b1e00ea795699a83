"""File history keeps every version with its author, compares the disk, and rewinds (`repo`)."""

from __future__ import annotations

from pathlib import Path

from sessionkeeper.recovery.subsystems.file_history import FileHistory
from tests.unit._recovery import edit, folded, rec, sha, workspace


def _history(*records: dict) -> FileHistory:
    return folded(FileHistory, *records)


def test_file_history_keeps_every_version_with_its_author(repo: Path) -> None:
    """Fixture: `repo`, payment.py written by the agent, then by the user (hashes given by the
    writer, so the content was never captured)."""
    original = (repo / "payment.py").read_text()
    sub = _history(edit(repo, 1, "payment.py", "v1\n"),
                   edit(repo, 2, "./payment.py", "v2\n", author="user"))
    uncaptured = {"content": "not_captured", "before_content": "not_captured"}
    assert sub.files == {"payment.py": [
        {"seq": 1, "hash": sha("v1\n"), "author": "agent", "before_hash": sha(original), **uncaptured},
        {"seq": 2, "hash": sha("v2\n"), "author": "user", "before_hash": sha("v1\n"), **uncaptured}]}


def test_file_history_finds_nothing_when_disk_matches_the_last_version(repo: Path) -> None:
    """Fixture: `repo`, payment.py edited by the agent and left alone."""
    sub = _history(edit(repo, 1, "payment.py", "v1\n"))
    assert sub.validate(workspace(repo), {}).differences == []


def test_file_history_reports_external_edit_as_file_changed(repo: Path) -> None:
    """Fixture: `repo`, payment.py edited by the agent, then outside the session."""
    sub = _history(edit(repo, 1, "payment.py", "v1\n"))
    (repo / "payment.py").write_text("edited in another editor\n")
    [diff] = sub.validate(workspace(repo), {}).differences
    assert diff.kind == "file_changed"
    assert diff.recorded == {"path": "payment.py", "seq": 1, "hash": sha("v1\n"), "author": "agent"}
    assert diff.current == {"path": "payment.py", "hash": sha("edited in another editor\n"),
                            "author": "external"}


def test_file_history_reports_a_deleted_file_as_file_missing(repo: Path) -> None:
    """Fixture: `repo`, test_payment.py written by the agent then deleted outside the session."""
    sub = _history(edit(repo, 1, "test_payment.py", "t\n"))
    (repo / "test_payment.py").unlink()
    assert [d.kind for d in sub.validate(workspace(repo), {}).differences] == ["file_missing"]


def test_file_history_accepts_a_file_the_session_deleted(repo: Path) -> None:
    """Fixture: `repo`, the agent deleted payment.py (after_hash absent)."""
    (repo / "payment.py").unlink()
    sub = _history(rec(1, "file_change", path="payment.py", before_hash="x"))
    assert sub.validate(workspace(repo), {}).differences == []


def test_file_history_never_reads_a_path_outside_the_workspace(repo: Path) -> None:
    """Fixture: `repo`, a recorded path climbing out of it."""
    sub = _history(rec(1, "file_change", path="../outside.txt", after_hash="h"))
    [diff] = sub.validate(workspace(repo), {}).differences
    assert diff.kind == "file_missing" and "outside the workspace" in diff.detail


def test_file_history_rewinds_to_the_versions_as_of_a_seq(repo: Path) -> None:
    """Fixture: `repo`, payment.py at seq 1 and 5, test_payment.py first at seq 7."""
    sub = _history(edit(repo, 1, "payment.py", "v1\n"), edit(repo, 5, "payment.py", "v2\n"),
                   edit(repo, 7, "test_payment.py", "t\n"))
    [version] = sub.rewind(4).values()
    assert set(sub.rewind(4)) == {"payment.py"}
    assert (version["seq"], version["hash"], version["author"]) == (1, sha("v1\n"), "agent")
    assert set(sub.rewind(7)) == {"payment.py", "test_payment.py"}
    assert sub.rewind(0) == {}
    assert sub.changed_after(5) == ["test_payment.py"]
