"""The model is restored with its overrides; an unavailable one falls back, reported (`repo`)."""

from __future__ import annotations

from pathlib import Path

from sessionkeeper.recovery.subsystems.base import Difference
from sessionkeeper.recovery.subsystems.model import ModelState
from tests.unit._recovery import meta, rec, workspace


def test_model_is_restored_with_overrides(repo: Path) -> None:
    """Fixture: `repo`, meta model then a model event with overrides."""
    sub = ModelState()
    sub.apply(meta(repo, model="gpt-a"))
    sub.apply(rec(4, "model", name="gpt-b", overrides={"temperature": 0.2}))
    restored = ModelState()
    restored.restore(sub.snapshot())
    assert restored.summary() == {"name": "gpt-b", "overrides": {"temperature": 0.2},
                                  "effective": "gpt-b", "fallback": None}


def test_model_reports_a_different_requested_model(repo: Path) -> None:
    """Fixture: `repo`, client now requests another model."""
    sub = ModelState()
    sub.apply(meta(repo, model="gpt-a"))
    diffs = sub.validate(workspace(repo, {"model": "gpt-z"}), {}).differences
    assert diffs == [Difference("model", "gpt-a", "gpt-z", "requested")]


def test_unknown_model_falls_back_and_is_reported(repo: Path) -> None:
    """Fixture: `repo`, the recorded model is not among the models available now."""
    sub = ModelState()
    sub.apply(meta(repo, model="retired-model"))
    ws = workspace(repo, {"models": ["m1", "m2"], "fallback_model": "m2"})
    diffs = sub.validate(ws, {}).differences
    assert [(d.kind, d.recorded, d.current) for d in diffs] == [("model", "retired-model", "m2")]
    assert sub.summary()["effective"] == "m2" and sub.summary()["name"] == "retired-model"


def test_model_from_session_meta_without_model_keeps_the_previous_one(repo: Path) -> None:
    """Fixture: `repo`, a resumed session's meta that names no model."""
    sub = ModelState()
    sub.apply(rec(1, "model", name="gpt-a"))
    sub.apply(meta(repo, seq=5))
    assert sub.summary()["name"] == "gpt-a"
