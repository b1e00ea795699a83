"""Attribution separates the agent's changes from the user's and feeds a commit trailer (`repo`)."""

from __future__ import annotations

from pathlib import Path

from sessionkeeper.recovery.subsystems.attribution import Attribution
from sessionkeeper.recovery.subsystems.file_history import FileHistory
from tests.unit._recovery import edit, workspace


def _fold(*records: dict) -> tuple[Attribution, FileHistory]:
    attribution, history = Attribution(), FileHistory()
    for record in records:
        attribution.apply(record)
        history.apply(record)
    restored = Attribution()
    restored.restore(attribution.snapshot())
    return restored, history


def test_attribution_groups_files_by_author_and_lists_agent_files_in_trailer(repo: Path) -> None:
    """Fixture: `repo`; the agent edits payment.py, the user test_payment.py, both notes.md."""
    sub, _ = _fold(edit(repo, 1, "payment.py", "a\n"),
                   edit(repo, 2, "test_payment.py", "u\n", author="user"),
                   edit(repo, 3, "notes.md", "a\n"),
                   edit(repo, 4, "notes.md", "u\n", author="user"))
    assert sub.by_author() == {"agent": ["payment.py"], "user": ["test_payment.py"],
                               "external": [], "mixed": ["notes.md"]}
    assert sub.trailer() == "Agent-Changed: notes.md, payment.py"


def test_attribution_has_no_trailer_without_agent_changes(repo: Path) -> None:
    """Fixture: `repo`; only the user edited."""
    sub, _ = _fold(edit(repo, 1, "payment.py", "u\n", author="user"))
    assert sub.trailer() is None


def test_attribution_is_incomplete_for_a_file_edited_outside_the_session(repo: Path) -> None:
    """Fixture: `repo`; the agent edits payment.py, then someone edits it unrecorded."""
    sub, history = _fold(edit(repo, 1, "payment.py", "a\n"))
    (repo / "payment.py").write_text("external\n")
    [inv] = sub.validate(workspace(repo), {"file_history": history}).invalidations
    assert inv.subsystem == "attribution" and inv.reason.startswith("payment.py was changed")
