"""Todos come back as they last stood, with done/total (fixture: records only)."""

from __future__ import annotations

from sessionkeeper.recovery.subsystems.todos import Todos
from tests.unit._recovery import rec


def test_todos_restore_the_latest_list_and_count_done() -> None:
    """Fixture: two todo events; the second replaces the first."""
    sub = Todos()
    sub.apply(rec(1, "todo", items=[{"id": "1", "text": "fix charge"}]))
    sub.apply(rec(4, "todo", items=[{"id": "1", "text": "fix charge", "status": "done"},
                                    {"id": "2", "text": "run tests", "status": "in_progress"},
                                    {"id": "3", "text": "open PR"}]))
    restored = Todos()
    restored.restore(sub.snapshot())
    summary = restored.summary()
    assert (summary["done"], summary["total"]) == (1, 3)
    assert [i["status"] for i in summary["items"]] == ["done", "in_progress", "pending"]


def test_todos_start_empty() -> None:
    """Fixture: no records."""
    assert Todos().summary() == {"done": 0, "total": 0, "items": []}
