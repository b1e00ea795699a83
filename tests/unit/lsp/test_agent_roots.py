"""The agents' roots watcher says it watches only once watchfiles does (real directories)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sessionkeeper.lsp import agent_roots
from sessionkeeper.lsp.agent_roots import RootsWatcher


def _wait(event: threading.Event, seconds: float = 10.0) -> bool:
    return event.wait(seconds)


def test_watching_is_announced_once_then_changes_are_reported(tmp_path: Path) -> None:
    """Fixture: one existing root; a file written after the watcher says it watches."""
    root = tmp_path / "codex"
    root.mkdir()
    order: list[str] = []
    watching, changed = threading.Event(), threading.Event()
    watcher = RootsWatcher([str(root)], on_change=lambda: (order.append("change"), changed.set()),
                           on_watching=lambda: (order.append("watching"), watching.set()))
    watcher.start()
    try:
        assert _wait(watching)
        (root / "rollout.jsonl").write_text("{}\n")
        assert _wait(changed)
    finally:
        watcher.stop()
    assert order[0] == "watching" and order.count("watching") == 1 and "change" in order


def test_a_watcher_stopped_before_it_watches_never_announces_it(tmp_path: Path) -> None:
    """Fixture: one existing root; the watcher stopped within its start delay."""
    root = tmp_path / "claude"
    root.mkdir()
    calls: list[str] = []
    watcher = RootsWatcher([str(root)], on_change=lambda: calls.append("change"),
                           on_watching=lambda: calls.append("watching"))
    watcher.start()
    watcher.stop()
    time.sleep(agent_roots.START_DELAY_S + 0.2)
    assert calls == []

