"""Tokens and money spent, per model; it only ever grows (resume and clear never reset it)."""

from __future__ import annotations

import copy
from typing import Any

from .base import Record, Subsystem, register

_COUNTERS = ("calls", "input_tokens", "output_tokens", "usd")


@register
class CostState(Subsystem):
    """model -> {calls, input_tokens, output_tokens, usd}."""

    name = "cost"
    handles = frozenset({"cost"})

    def __init__(self) -> None:
        self.models: dict[str, dict[str, Any]] = {}

    def apply(self, record: Record) -> None:
        """Add one model call's tokens and money to its model's counters."""
        row = self.models.setdefault(record["model"], dict.fromkeys(_COUNTERS, 0))
        row["calls"] += 1
        row["input_tokens"] += record.get("input_tokens", 0)
        row["output_tokens"] += record.get("output_tokens", 0)
        row["usd"] += record.get("usd", 0.0)

    def snapshot(self) -> dict[str, Any]:
        """Return {"models": {model: counters}}."""
        return {"models": copy.deepcopy(self.models)}

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        self.models = copy.deepcopy(state.get("models", {}))

    def totals(self) -> dict[str, Any]:
        """Return the counters summed over every model (usd rounded to 1e-6)."""
        out = {key: sum(row[key] for row in self.models.values()) for key in _COUNTERS}
        out["usd"] = round(out["usd"], 6)
        return out

    def summary(self) -> dict[str, Any]:
        """Return {"models": per-model counters, "total": totals}."""
        models = {m: {**row, "usd": round(row["usd"], 6)} for m, row in self.models.items()}
        return {"models": models, "total": self.totals()}

    def headline(self) -> str:
        """Money and tokens so far."""
        t = self.totals()
        return f"${t['usd']:.4f}, {t['input_tokens']} in / {t['output_tokens']} out tokens"
