"""The checkpoints subsystem and fold_history: values carried by version, writes by (task, idx),
removals, snapshots that hold only the newest checkpoint per namespace."""

from __future__ import annotations

from typing import Any

from sessionkeeper.recovery.state import SessionState
from sessionkeeper.recovery.subsystems.checkpoints import MISSING, Checkpoints, fold_history

A, B = ["inline", "msgpack", "a1"], ["inline", "msgpack", "b1"]


def checkpoint(seq: int, cid: str, versions: dict[str, int], values: dict[str, list[str]],
               ns: str = "", parent: str | None = None) -> dict[str, Any]:
    """A `checkpoint` record as the saver writes it."""
    return {"seq": seq, "type": "checkpoint", "thread": "t", "ns": ns, "checkpoint_id": cid,
            "parent_id": parent, "checkpoint": ["msgpack", "00"], "metadata": {"step": seq},
            "versions": [[c, v] for c, v in versions.items()],
            "values": [[c, versions[c], p] for c, p in values.items()]}


def writes(seq: int, cid: str, task: str, rows: list[list[Any]]) -> dict[str, Any]:
    """A `checkpoint_writes` record."""
    return {"seq": seq, "type": "checkpoint_writes", "thread": "t", "ns": "", "checkpoint_id": cid,
            "task_id": task, "writes": rows}


STORY = [
    checkpoint(1, "c1", {"a": 1, "b": 1}, {"a": A, "b": B}),
    writes(2, "c1", "t1", [[0, "a", A], [-1, "__error__", A]]),
    writes(3, "c1", "t1", [[0, "a", B], [-1, "__error__", B]]),  # a re-delivery
    checkpoint(4, "c2", {"a": 2, "b": 1}, {"a": B}, parent="c1"),
    checkpoint(5, "k1", {"x": 1}, {}, ns="child:1"),  # a value in no record
]


def test_a_channel_is_carried_at_its_version_and_a_new_checkpoint_has_no_writes() -> None:
    """Fixture: STORY folded into a fresh state."""
    state = SessionState()
    state.fold(STORY)
    sub = state.get(Checkpoints)
    newest = sub.newest("")
    assert newest is not None and newest["id"] == "c2" and newest["parent"] == "c1" and newest["writes"] == []
    assert newest["channels"] == [["a", 2, B], ["b", 1, B]]
    assert (sub.newest("child:1") or {}).get("channels") == [["x", 1, MISSING]]
    assert (sub.recorded, sub.headline()) == (3, "3 checkpoint(s) in 2 namespace(s), latest step 4")


def test_repeated_writes_keep_the_first_regular_value_and_the_last_special_one() -> None:
    """Fixture: STORY's writes, folded into the history of c1."""
    history = fold_history(STORY)
    assert history.namespaces[""]["c1"]["writes"] == [["t1", 0, "a", A, ""],
                                                      ["t1", -1, "__error__", B, ""]]
    assert list(history.namespaces[""]) == ["c1", "c2"]


def test_a_snapshot_holds_the_newest_per_namespace_and_restores_to_the_same_state() -> None:
    """Fixture: STORY folded, snapshotted, restored into a new state."""
    state = SessionState()
    state.fold(STORY)
    snapshot = state.snapshot()["checkpoints"]
    assert sorted(snapshot["latest"]) == ["", "child:1"]
    again = SessionState()
    again.restore(state.snapshot(), through_seq=5)
    assert again.get(Checkpoints).snapshot() == snapshot


def test_removing_the_newest_checkpoint_leaves_the_namespace_without_one() -> None:
    """Fixture: STORY plus a removal of c2 and k1."""
    removal = {"seq": 6, "type": "checkpoints_removed", "thread": "t",
               "removed": [["", "c2"], ["child:1", "k1"]]}
    state = SessionState()
    state.fold([*STORY, removal])
    assert state.get(Checkpoints).newest("") is None
    history = fold_history([*STORY, removal])
    assert list(history.namespaces[""]) == ["c1"] and history.latest == {}
