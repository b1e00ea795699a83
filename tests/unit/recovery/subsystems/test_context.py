"""Context restores the compacted summary plus later messages, never both (records only)."""

from __future__ import annotations

from sessionkeeper.recovery.subsystems.context import Context
from tests.unit._recovery import folded, rec


def _msg(seq: int, text: str, **extra: object) -> dict:
    return rec(seq, "message", role="user", text=text, **extra)


def _fold(*records: dict) -> Context:
    return folded(Context, *records)


def test_compacted_summary_replaces_the_messages_it_covers() -> None:
    """Fixture: messages 1-3, compaction through 2, message 5."""
    sub = _fold(_msg(1, "a"), _msg(2, "b"), _msg(3, "c"),
                rec(4, "compacted", summary="S(a,b)", through_seq=2), _msg(5, "d"))
    assert [(m["text"], m["summary"]) for m in sub.conversation()] == [
        ("S(a,b)", True), ("c", False), ("d", False)]
    assert sub.summary() == {"compacted_through_seq": 2, "messages": 2}


def test_replayed_message_already_covered_by_the_summary_is_not_restored() -> None:
    """Fixture: compaction through 2, then message 2 delivered again."""
    sub = _fold(_msg(1, "a"), _msg(2, "b"), rec(3, "compacted", summary="S", through_seq=2),
                _msg(2, "b"))
    assert [m["text"] for m in sub.conversation()] == ["S"]


def test_redelivered_message_id_is_restored_once() -> None:
    """Fixture: the same message_id at seq 1 and 2."""
    sub = _fold(_msg(1, "a", message_id="m1"), _msg(2, "a", message_id="m1"))
    assert [m["text"] for m in sub.conversation()] == ["a"]


def test_clear_drops_the_context_and_later_messages_start_fresh() -> None:
    """Fixture: a summary and messages, a lifecycle clear, then one message."""
    sub = _fold(_msg(1, "a"), rec(2, "compacted", summary="S", through_seq=1), _msg(3, "b"),
                rec(4, "lifecycle", source="clear", reason="user"), _msg(5, "c"))
    assert [m["text"] for m in sub.conversation()] == ["c"]


def test_other_lifecycle_sources_keep_the_context() -> None:
    """Fixture: a message then startup/resume/compact lifecycle events."""
    sub = _fold(_msg(1, "a"), rec(2, "lifecycle", source="resume"),
                rec(3, "lifecycle", source="compact"))
    assert [m["text"] for m in sub.conversation()] == ["a"]
