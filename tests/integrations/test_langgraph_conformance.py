"""LangGraph's own conformance suite (langgraph-checkpoint-conformance) run against our saver."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from langgraph.checkpoint.conformance import checkpointer_test, validate  # noqa: E402
from langgraph.checkpoint.conformance.report import CapabilityReport  # noqa: E402

from sessionkeeper.integrations.langgraph import SessionKeeperSaver  # noqa: E402

EXTENDED = ("delete_for_runs", "copy_thread", "prune")


@checkpointer_test(name="SessionKeeperSaver")
async def session_keeper_saver() -> AsyncIterator[SessionKeeperSaver]:
    """A fresh saver on a fresh temporary store for each capability suite."""
    with tempfile.TemporaryDirectory() as root, \
            SessionKeeperSaver(Path(root) / "store") as saver:
        yield saver


async def test_the_saver_passes_every_base_and_extended_capability_of_the_suite() -> None:
    """Fixture: `session_keeper_saver` (a temporary store per capability)."""
    report: CapabilityReport = await validate(session_keeper_saver)
    report.print_report()
    failures = {name: r.failures for name, r in report.results.items() if r.failures}
    assert report.passed_all_base(), failures
    for name in EXTENDED:
        result = report.results[name]
        assert result.detected and result.passed, (name, result)
    assert all(r.tests_skipped == 0 for r in report.results.values())
