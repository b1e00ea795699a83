"""The tool ledger: duplicates recognised, in-doubt operations reported (records only)."""

from __future__ import annotations

import orjson

from sessionkeeper.recovery.subsystems.operations import HOT, Archive, Operations
from tests.unit._recovery import rec


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


def _finished(count: int, *, first_seq: int = 1) -> list[dict]:
    records = []
    for n in range(count):
        seq = first_seq + 2 * n
        records += [_op(seq, f"op-{n}", "started"),
                    _op(seq + 1, f"op-{n}", "committed" if n % 3 else "failed", result={"n": n})]
    return records


def _with_log(sub: Operations, records: list[dict]) -> Operations:
    sub.log = lambda after, through, types: (r for r in records if after < r["seq"] <= through
                                             and (types is None or r["type"] in types))
    return sub


def test_ledger_keeps_only_recent_finished_operations_whole() -> None:
    """Fixture: 1,000 operations started and finished, one started and left in doubt first."""
    records = [_op(1, "op-doubt", "started"), *_finished(1000, first_seq=2)]
    sub = _with_log(Operations(), records)
    for record in records:
        sub.apply(record)
    state = sub.snapshot()
    assert len(state["ledger"]) <= HOT and "op-doubt" in state["ledger"]
    restored = _with_log(Operations(), records)
    restored.restore(orjson.loads(orjson.dumps(state)))
    assert restored.counts() == sub.counts() == {
        "total": 1001, "committed": 666, "failed": 334, "in_doubt": 1, "duplicates": 0}
    assert restored.in_doubt() == [{"operation_id": "op-doubt", "tool": "shell", "seq": 1}]


def test_an_archived_operation_is_read_back_whole_from_the_log() -> None:
    """Fixture: 1,000 finished operations; op-0's entry captured when it finished."""
    records = _finished(1000)
    sub = _with_log(Operations(), records)
    sub.apply(records[0])
    sub.apply(records[1])
    whole = sub.lookup("op-0")
    for record in records[2:]:
        sub.apply(record)
    assert "op-0" not in sub.snapshot()["ledger"]
    restored = _with_log(Operations(), records)
    restored.restore(orjson.loads(orjson.dumps(sub.snapshot())))
    assert restored.lookup("op-0") == whole
    assert "op-0" in restored.snapshot()["ledger"] and restored.counts() == sub.counts()


def test_a_redelivered_archived_operation_is_still_a_duplicate() -> None:
    """Fixture: 1,000 finished operations, then op-0's committed record delivered again."""
    records = _finished(1000)
    sub = _with_log(Operations(), records)
    for record in records:
        sub.apply(record)
    sub.apply(_op(5000, "op-1", "committed", result={"n": 1}))
    assert sub.duplicates == [{"operation_id": "op-1", "status": "committed", "seq": 5000,
                               "tool": "shell", "identical": True}]
    assert sub.counts()["total"] == 1000


def test_a_fingerprint_without_records_in_the_log_is_a_new_operation() -> None:
    """Fixture: an archive naming op-x (as a fingerprint collision would) and an empty log."""
    sub = _with_log(Operations(), [])
    sub.archive.add("op-x", "committed", seq=9)
    assert sub.lookup("op-x") is None
    sub.apply(_op(10, "op-x", "started"))
    assert sub.entry("op-x")["status"] == "started" and "op-x" in sub.archive


def test_archive_state_round_trips_through_json() -> None:
    """Fixture: an archive of 3 operations, one taken back out."""
    archive = Archive()
    for n, status in enumerate(("committed", "failed", "committed")):
        archive.add(f"op-{n}", status, seq=10 + n)
    archive.discard("op-2", "committed")
    again = Archive.from_state(orjson.loads(orjson.dumps(archive.state())))
    assert ("op-0" in again, "op-1" in again, "op-2" in again) == (True, True, False)
    assert (again.committed, again.failed, again.through) == (1, 1, 12)
