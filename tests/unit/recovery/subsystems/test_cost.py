"""Cost accumulates per model and survives snapshot/restore (fixture: records only)."""

from __future__ import annotations

from sessionkeeper.recovery.subsystems.cost import CostState
from tests.unit._recovery import rec


def test_cost_accumulates_per_model_and_in_total() -> None:
    """Fixture: three calls on two models, one restore in the middle."""
    sub = CostState()
    sub.apply(rec(1, "cost", model="m1", input_tokens=100, output_tokens=10, usd=0.1))
    restored = CostState()
    restored.restore(sub.snapshot())
    restored.apply(rec(2, "cost", model="m1", input_tokens=50, usd=0.2))
    restored.apply(rec(3, "cost", model="m2", output_tokens=5))
    summary = restored.summary()
    assert summary["models"]["m1"] == {"calls": 2, "input_tokens": 150, "output_tokens": 10,
                                       "usd": 0.3}
    assert summary["total"] == {"calls": 3, "input_tokens": 150, "output_tokens": 15, "usd": 0.3}
