"""The context's recent message ids: a bounded FIFO with a constant-time membership test."""

from __future__ import annotations

from collections import deque

from hypothesis import given
from hypothesis import strategies as st

from sessionkeeper.recovery.subsystems.context import RecentIds


@given(ids=st.lists(st.sampled_from("abcdefgh"), max_size=60), size=st.integers(1, 9))
def test_recent_ids_hold_what_a_bounded_deque_holds(ids: list[str], size: int) -> None:
    """Random ids, repeats included (a restored list may repeat one), against deque(maxlen)."""
    recent, expected = RecentIds(size), deque(maxlen=size)
    for mid in ids:
        recent.append(mid)
        expected.append(mid)
        assert list(recent) == list(expected)
        for probe in "abcdefgh":
            assert (probe in recent) == (probe in expected)


def test_an_id_pushed_out_by_newer_ones_is_no_longer_recent() -> None:
    """Three ids through a window of two; then clear."""
    recent = RecentIds(2)
    recent.extend(["m1", "m2", "m3"])
    assert "m1" not in recent and "m2" in recent and "m3" in recent
    recent.clear()
    assert list(recent) == [] and "m3" not in recent


def test_an_id_that_is_not_a_string_is_no_id() -> None:
    """A list, a number and a dict as ids (a crafted rollout's), beside one real id."""
    recent = RecentIds(4)
    recent.extend([["m1"], 7, {"a": 1}, "m2"])
    assert list(recent) == ["m2"]
    assert ["m1"] not in recent and 7 not in recent and "m2" in recent


def test_a_message_with_a_crafted_id_is_folded_and_the_context_stays_healthy() -> None:
    """Records as a crafted rollout may hold them: a message whose message_id is a list, twice."""
    from sessionkeeper.recovery.state import SessionState

    state = SessionState()
    for seq in (1, 2):
        state.apply({"type": "message", "seq": seq, "role": "user", "text": "hi",
                     "message_id": ["m1"]})
    assert state.broken == {}
    assert state.subsystems["context"].summary()["messages"] == 2
