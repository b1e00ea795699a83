"""The verifier comes back as it was (tests 7/9, findings) or is stale with the reason (`repo`)."""

from __future__ import annotations

from pathlib import Path

from sessionkeeper.recovery.subsystems.base import Invalidation
from sessionkeeper.recovery.subsystems.file_history import FileHistory
from sessionkeeper.recovery.subsystems.verifier import VerifierState
from tests.unit._recovery import edit, rec, workspace


def _fold(*records: dict) -> tuple[VerifierState, FileHistory]:
    verifier, history = VerifierState(), FileHistory()
    for record in records:
        (verifier if record["type"] == "verifier" else history).apply(record)
    restored = VerifierState()
    restored.restore(verifier.snapshot())
    return restored, history


def test_verifier_restores_tests_and_review_findings(repo: Path) -> None:
    """Fixture: `repo`; the agent edits payment.py, tests 7/9, a review with one finding."""
    verifier, history = _fold(
        edit(repo, 1, "payment.py", "v1\n"),
        rec(2, "verifier", kind="tests", passed=7, total=9, checkpoint="tests: 7/9",
            command="pytest"),
        rec(3, "verifier", kind="review", findings=["charge() ignores currency"]))
    assert verifier.summary()["tests"] == {"seq": 2, "passed": 7, "total": 9,
                                           "checkpoint": "tests: 7/9", "command": "pytest",
                                           "findings": []}
    assert verifier.summary()["review"]["findings"] == ["charge() ignores currency"]
    assert verifier.validate(workspace(repo), {"file_history": history}).invalidations == []


def test_verifier_is_stale_when_file_changed_after_run(repo: Path) -> None:
    """Fixture: `repo`; tests 7/9 at seq 2, then the agent edits payment.py at seq 3."""
    verifier, history = _fold(edit(repo, 1, "payment.py", "v1\n"),
                              rec(2, "verifier", passed=7, total=9),
                              edit(repo, 3, "payment.py", "v2\n"))
    assert verifier.validate(workspace(repo), {"file_history": history}).invalidations == [
        Invalidation("verifier", "stale: payment.py changed after the test run at seq 2")]


def test_verifier_is_stale_when_a_file_was_edited_outside_the_session(repo: Path) -> None:
    """Fixture: `repo`; tests at seq 2, then payment.py edited in another editor (unrecorded)."""
    verifier, history = _fold(edit(repo, 1, "payment.py", "v1\n"),
                              rec(2, "verifier", passed=9, total=9))
    (repo / "payment.py").write_text("tweaked\n")
    [inv] = verifier.validate(workspace(repo), {"file_history": history}).invalidations
    assert inv.reason == "stale: payment.py changed after the test run at seq 2"


def test_verifier_without_runs_is_never_stale(repo: Path) -> None:
    """Fixture: `repo`; a file edit but no verifier event."""
    verifier, history = _fold(edit(repo, 1, "payment.py", "v1\n"))
    assert verifier.validate(workspace(repo), {"file_history": history}).invalidations == []
