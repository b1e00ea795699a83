"""The tool ledger: duplicates recognised, in-doubt operations reported (records only)."""

from __future__ import annotations

from sessionkeeper.recovery.subsystems.operations import Operations

from ._recovery import rec


def _op(seq: int, op_id: str, status: str, **extra: object) -> dict:
    return rec(seq, "operation", operation_id=op_id, tool="shell", status=status,
               args_digest="d-" + op_id, **extra)


def test_redelivered_operation_is_a_duplicate_not_counted_twice() -> None:
    """Fixture: op-1 started and committed, then the committed record re-delivered."""
    sub = Operations()
    for record in (_op(1, "op-1", "started"), _op(2, "op-1", "committed", result="ok"),
                   _op(3, "op-1", "committed", result="ok")):
        sub.apply(record)
    assert sub.counts() == {"total": 1, "committed": 1, "failed": 0, "in_doubt": 0,
                            "duplicates": 1}
    assert sub.duplicates == [{"operation_id": "op-1", "status": "committed", "seq": 3,
                               "tool": "shell", "identical": True}]
    assert sub.lookup("op-1")["result"] == "ok" and sub.lookup("op-1")["seq"] == 2


def test_operation_started_but_never_committed_is_in_doubt() -> None:
    """Fixture: op-1 committed, op-2 started only (the process died mid-call)."""
    sub = Operations()
    for record in (_op(1, "op-1", "started"), _op(2, "op-1", "committed"),
                   _op(3, "op-2", "started")):
        sub.apply(record)
    restored = Operations()
    restored.restore(sub.snapshot())
    assert restored.in_doubt() == [{"operation_id": "op-2", "tool": "shell", "seq": 3}]


def test_failed_operation_is_neither_committed_nor_in_doubt() -> None:
    """Fixture: op-1 started then failed."""
    sub = Operations()
    sub.apply(_op(1, "op-1", "started"))
    sub.apply(_op(2, "op-1", "failed"))
    assert sub.counts()["failed"] == 1 and sub.in_doubt() == []


def test_late_redelivered_start_never_reopens_a_committed_operation() -> None:
    """Fixture: op-1 started, committed, then its `started` record re-delivered."""
    sub = Operations()
    for record in (_op(1, "op-1", "started"), _op(2, "op-1", "committed"),
                   _op(3, "op-1", "started")):
        sub.apply(record)
    assert sub.lookup("op-1")["status"] == "committed" and sub.in_doubt() == []
    assert [d["status"] for d in sub.duplicates] == ["started"]


def test_redelivery_with_other_arguments_is_flagged_not_identical() -> None:
    """Fixture: op-1 started twice with different args digests."""
    sub = Operations()
    sub.apply(_op(1, "op-1", "started"))
    sub.apply({**_op(2, "op-1", "started"), "args_digest": "other"})
    assert sub.duplicates[0]["identical"] is False
