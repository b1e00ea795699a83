"""SessionState folds, snapshots, restores and validates every subsystem in dependency order.

Fixture: `repo` (conftest) carrying the seed's story — edits on fix/payment, tests 7/9, crash.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionkeeper.recovery.comparison import verdict_of
from sessionkeeper.recovery.state import SessionState, dependency_order
from sessionkeeper.recovery.subsystems import REGISTRY
from sessionkeeper.recovery.subsystems.base import (
    Findings,
    Invalidation,
    Subsystem,
    Workspace,
)
from tests.conftest import git
from tests.unit._recovery import edit, meta, rec, workspace

ALL = {"worktree", "permissions", "model", "file_history", "todos", "operations", "verifier",
       "cost", "attribution", "context"}


def _story(repo: Path) -> list[dict[str, Any]]:
    """The seed session: two edits on fix/payment, tests 7/9, one tool call in doubt."""
    return [
        meta(repo, model="gpt-a", permissions={"approval_mode": "never",
                                                "sandbox_policy": "workspace-write",
                                                "tool_profile": "coding"}),
        rec(1, "message", role="user", text="fix the payment rounding"),
        rec(2, "todo", items=[{"id": "1", "text": "fix rounding", "status": "done"},
                              {"id": "2", "text": "make tests green"}]),
        edit(repo, 3, "payment.py", "def charge(amount):\n    return round(amount, 2)\n"),
        edit(repo, 4, "test_payment.py", "from payment import charge\n# 9 tests\n"),
        rec(5, "operation", operation_id="op-1", tool="pytest", status="started"),
        rec(6, "operation", operation_id="op-1", tool="pytest", status="committed"),
        rec(7, "verifier", passed=7, total=9, checkpoint="tests: 7/9"),
        rec(8, "cost", model="gpt-a", input_tokens=1200, output_tokens=300, usd=0.05),
        rec(9, "operation", operation_id="op-2", tool="shell", status="started"),
    ]


def _state(records: list[dict[str, Any]]) -> SessionState:
    state = SessionState()
    state.fold(records)
    return state


def test_every_subsystem_module_is_registered_by_importing_the_package() -> None:
    """Fixture: the subsystems package."""
    assert set(REGISTRY) >= ALL
    assert set(SessionState().order) == set(REGISTRY)


def test_subsystems_are_ordered_after_their_dependencies() -> None:
    """Fixture: the real registry."""
    order = SessionState().order
    assert order.index("file_history") < order.index("verifier")
    assert order.index("file_history") < order.index("attribution")


def test_dependency_cycle_and_unknown_dependency_are_refused() -> None:
    """Fixture: two made-up subsystems depending on each other."""
    class A(Subsystem):
        name, depends_on = "a", ("b",)

    class B(Subsystem):
        name, depends_on = "b", ("a",)

    with pytest.raises(ValueError, match="cycle"):
        dependency_order({"a": A, "b": B})
    with pytest.raises(ValueError, match="unknown"):
        dependency_order({"a": A})


def test_resume_in_the_same_workspace_restores_everything_without_findings(repo: Path) -> None:
    """Fixture: `repo` with the seed story folded, snapshotted and restored into a new state."""
    before = _state(_story(repo))
    after = SessionState()
    assert after.restore(before.snapshot(), through_seq=9) == []
    assert after.snapshot() == before.snapshot()
    assert after.validate(workspace(repo)) == ([], [])
    summary = after.summaries()
    assert (summary["todos"]["done"], summary["todos"]["total"]) == (1, 2)
    assert summary["verifier"]["tests"]["checkpoint"] == "tests: 7/9"
    assert summary["permissions"]["approval_mode"] == "never"
    assert summary["model"]["effective"] == "gpt-a"
    assert summary["cost"]["total"]["usd"] == 0.05
    assert summary["attribution"]["agent"] == ["payment.py", "test_payment.py"]
    assert summary["operations"]["in_doubt_operations"] == [
        {"operation_id": "op-2", "tool": "shell", "seq": 9}]


def test_resume_reports_drift_when_branch_changed(repo: Path) -> None:
    """Fixture: `repo` with the seed story, then switched to main."""
    state = _state(_story(repo))
    git(repo, "checkout", "-q", "main")  # same commit: the uncommitted edits stay on disk
    differences, invalidations = state.validate(workspace(repo))
    assert [(d.kind, d.recorded, d.current) for d in differences] == [
        ("branch", "fix/payment", "main")]
    assert invalidations == []


def test_resume_reports_external_edit_and_stale_verifier(repo: Path) -> None:
    """Fixture: `repo` with the seed story, then payment.py edited outside the session."""
    state = _state(_story(repo))
    (repo / "payment.py").write_text("def charge(amount):\n    return 0\n")
    differences, invalidations = state.validate(workspace(repo))
    assert [(d.kind, d.current["author"]) for d in differences] == [("file_changed", "external")]
    assert Invalidation("verifier", "stale: payment.py changed after the test run at seq 7") in (
        invalidations)


def test_resume_is_blocked_only_by_cwd_missing_when_the_workspace_is_gone(repo: Path) -> None:
    """Fixture: `repo` with the seed story, then deleted."""
    state = _state(_story(repo))
    shutil.rmtree(repo)
    differences, invalidations = state.validate(workspace(repo))
    assert [(d.kind, d.recorded) for d in differences] == [("cwd_missing", str(repo))]
    assert verdict_of(differences) == "blocked" and invalidations == []


def test_fold_skips_records_already_covered_and_counts_them(repo: Path) -> None:
    """Fixture: `repo`; the story folded, then its cost record delivered again (same seq)."""
    story = _story(repo)
    state = _state(story)
    assert state.fold([story[8]]) == 0
    assert state.skipped == [8] and state.summaries()["cost"]["total"]["calls"] == 1


def test_snapshot_record_in_the_stream_restores_then_the_tail_folds(repo: Path) -> None:
    """Fixture: `repo`; a snapshot event (as the session writes it) after seq 5, then the tail."""
    story = _story(repo)
    head = _state(story[:6])
    snap = rec(6, "snapshot", through_seq=5,
               state={"subsystems": head.snapshot(), "summary": {}})
    tail = [{**r, "seq": r["seq"] + 1} for r in story[6:]]
    fresh = SessionState()
    fresh.fold([snap, *tail])
    full = _state([*story[:6], *tail])
    assert fresh.snapshot() == full.snapshot() and fresh.through_seq == 10


def test_clear_drops_context_but_keeps_cost_model_and_permissions(repo: Path) -> None:
    """Fixture: `repo`; the story, then a lifecycle clear."""
    state = _state([*_story(repo), rec(10, "lifecycle", source="clear", reason="user")])
    summary = state.summaries()
    assert summary["context"]["messages"] == 0
    assert summary["cost"]["total"]["calls"] == 1
    assert summary["model"]["name"] == "gpt-a"
    assert summary["permissions"]["tool_profile"] == "coding"
    assert summary["todos"]["total"] == 2


def test_restore_names_subsystems_missing_from_an_old_snapshot(repo: Path) -> None:
    """Fixture: `repo`; a snapshot written before `attribution` existed."""
    snapshot = _state(_story(repo)).snapshot()
    del snapshot["attribution"]
    state = SessionState()
    assert state.restore(snapshot) == ["attribution"]
    assert state.missing_from_snapshot == ["attribution"]


class _Boom(Subsystem):
    name: ClassVar[str] = "boom"
    handles: ClassVar[frozenset[str]] = frozenset({"todo"})

    def apply(self, record: dict[str, Any]) -> None:
        self.seen = True

    def snapshot(self) -> dict[str, Any]:
        return {}

    def restore(self, state: dict[str, Any]) -> None:
        pass

    def validate(self, workspace: Workspace, deps: Any) -> Findings:
        raise RuntimeError("disk on fire")


class _Dependent(_Boom):
    name: ClassVar[str] = "dependent"
    depends_on: ClassVar[tuple[str, ...]] = ("boom",)

    def validate(self, workspace: Workspace, deps: Any) -> Findings:
        return Findings()


class _BadFold(_Boom):
    name: ClassVar[str] = "bad_fold"

    def apply(self, record: dict[str, Any]) -> None:
        raise KeyError("items")


def test_a_subsystem_that_raises_is_isolated_as_an_invalidation(repo: Path) -> None:
    """Fixture: `repo`; the real subsystems plus one whose validation raises and its dependent."""
    state = SessionState({**REGISTRY, "boom": _Boom, "dependent": _Dependent})
    state.fold(_story(repo))
    differences, invalidations = state.validate(workspace(repo))
    assert differences == []
    assert invalidations == [
        Invalidation("boom", "validation failed: RuntimeError('disk on fire')"),
        Invalidation("dependent", "not validated: depends on boom, which failed")]


def test_a_subsystem_that_fails_to_fold_stops_and_is_left_out_of_snapshots(repo: Path) -> None:
    """Fixture: `repo`; a subsystem that raises on every todo record."""
    state = SessionState({**REGISTRY, "bad_fold": _BadFold})
    state.fold(_story(repo))
    assert "bad_fold" not in state.snapshot() and state["todos"].summary()["total"] == 2
    [inv] = [i for i in state.validate(workspace(repo))[1] if i.subsystem == "bad_fold"]
    assert inv.reason == "failed to fold todo seq 2: KeyError('items')"


def test_validation_hashes_each_file_once(repo: Path) -> None:
    """Fixture: `repo`; file_history, verifier and attribution all ask about the same files."""
    state = _state(_story(repo))
    calls: list[str] = []
    real = workspace(repo)

    def counting(path: str) -> str | None:
        calls.append(path)
        return real.file_hash(path)

    state.validate(Workspace(real.root, real.exists, real.baseline, counting, real.requested))
    assert sorted(calls) == ["payment.py", "test_payment.py"]


_RECORDS = st.one_of(
    st.builds(lambda m, n: {"type": "cost", "model": m, "input_tokens": n},
              st.sampled_from(["m1", "m2"]), st.integers(0, 99)),
    st.builds(lambda i, s: {"type": "operation", "operation_id": f"op-{i}", "tool": "t",
                            "status": s},
              st.integers(0, 3), st.sampled_from(["started", "committed", "failed"])),
    st.builds(lambda t: {"type": "message", "role": "user", "text": t}, st.text(max_size=3)),
    st.builds(lambda p, a: {"type": "file_change", "path": p, "after_hash": "h", "author": a},
              st.sampled_from(["a.py", "b.py"]), st.sampled_from(["agent", "user"])),
    st.just({"type": "lifecycle", "source": "clear"}),
    st.just({"type": "verifier", "passed": 1, "total": 2}),
    st.just({"type": "compacted", "summary": "s", "through_seq": -1}),
)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(_RECORDS, max_size=30), st.data())
def test_snapshot_then_tail_equals_folding_everything(bodies: list[dict], data: Any) -> None:
    """Fixture: generated record streams, cut at any point (compactions cover the previous seq)."""
    records = []
    for seq, body in enumerate(bodies, start=1):
        if body["type"] == "compacted":
            body = {**body, "through_seq": seq - 1}
        records.append({"seq": seq, **body})
    cut = data.draw(st.integers(0, len(records)))
    full, head = _state(records), _state(records[:cut])
    resumed = SessionState()
    resumed.restore(head.snapshot(), through_seq=head.through_seq)
    resumed.fold(records[cut:])
    assert resumed.snapshot() == full.snapshot()
