"""The reader on mutated rollouts (Hypothesis, derandomized): never raises, never invents a record.

Every record it returns is byte-for-byte one of the original records (same seq, same content),
and a single flipped bit anywhere is always noticed (a record dropped, damage or a tail reported).
"""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionkeeper.store.codec import frame
from sessionkeeper.store.reader import parse_rollout

TS = b"2026-11-29T10:00:00.000Z"
META = {"type": "session_meta", "schema_version": 2, "thread_id": "t", "session_id": "s",
        "cwd": "/w"}
EVENTS = [{"type": "message", "role": "user", "text": f"message {i} " + "x" * (i * 7)}
          for i in range(12)]
ORIGINAL = frame(0, TS, orjson.dumps(META)) + b"".join(
    frame(i, TS, orjson.dumps(e)) for i, e in enumerate(EVENTS, start=1))
BY_SEQ = {i: {"seq": i, "ts": TS.decode(), **e} for i, e in enumerate(EVENTS, start=1)}
FUZZ = settings(max_examples=400, derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def _only_original_records(data: bytes) -> None:
    rollout = parse_rollout(data)
    for record in rollout.records:
        assert BY_SEQ.get(record["seq"]) == record


@FUZZ
@given(st.integers(0, len(ORIGINAL) * 8 - 1))
def test_a_single_flipped_bit_is_always_noticed(bit):
    """Fixture: the 13-line ORIGINAL rollout with one bit flipped."""
    data = bytearray(ORIGINAL)
    data[bit // 8] ^= 1 << (bit % 8)
    rollout = parse_rollout(bytes(data))
    _only_original_records(bytes(data))
    noticed = (len(rollout.records) < len(EVENTS) or rollout.damage or rollout.tail
               or rollout.meta != {"seq": 0, "ts": TS.decode(), **META})
    assert noticed


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["cut", "insert", "overwrite", "swap"]),
                          st.integers(0, len(ORIGINAL)), st.binary(min_size=1, max_size=40)),
                min_size=1, max_size=4))
def test_any_mutation_yields_a_subset_of_the_original_records(mutations):
    """Fixture: ORIGINAL with truncations, insertions, overwrites and swapped chunks."""
    data = bytearray(ORIGINAL)
    for kind, at, chunk in mutations:
        at = min(at, len(data))
        if kind == "cut":
            del data[at:]
        elif kind == "insert":
            data[at:at] = chunk
        elif kind == "overwrite":
            data[at:at + len(chunk)] = chunk
        elif len(data) > 2 * len(chunk):
            j = (at + len(chunk)) % (len(data) - len(chunk))
            a, b = bytes(data[at:at + len(chunk)]), bytes(data[j:j + len(chunk)])
            data[at:at + len(a)], data[j:j + len(b)] = b, a
    _only_original_records(bytes(data))
