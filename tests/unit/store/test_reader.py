"""The reader's integrity rules on hand-made rollouts: legacy lines, seq order, the snapshot prefix,
crafted envelopes and integers beyond 64 bits (issue 12 items 3, 10, 10a, 19)."""

from __future__ import annotations

import zlib
from pathlib import Path

import orjson
import pytest

from sessionkeeper.store.codec import MAX_SEQ, frame
from sessionkeeper.store.reader import Status, parse_rollout, read_latest, read_rollout

TS = b"2026-11-29T10:00:00.000Z"
THREAD = "7b0c4a52-3f7e-4c1e-9a43-1f2d5e6a7b80"
SESSION = "c3a1e9d4-5b6f-4a7c-8d9e-0f1a2b3c4d5e"
META = {"type": "session_meta", "schema_version": 2, "thread_id": THREAD, "session_id": SESSION,
        "cwd": "/work/repo-a", "source": "startup"}


def framed(seq: object, body: dict) -> bytes:
    """A line with a valid CRC whatever its seq is (a crafted line, as an attacker would write)."""
    core = b'{"seq":%s,"ts":"%s",%s' % (orjson.dumps(seq), TS, orjson.dumps(body)[1:-1])
    return b'%s,"crc":"%08x"}\n' % (core, zlib.crc32(core))


def message(n: int) -> dict:
    """A small message body."""
    return {"type": "message", "role": "user", "text": f"message {n}"}


def rollout_bytes(n: int = 5, meta: dict | None = None) -> list[bytes]:
    """Meta at seq 0 and `n` messages at seq 1..n, one line each (fixture of most tests here)."""
    return [frame(0, TS, orjson.dumps(meta or META))] + [
        frame(i, TS, orjson.dumps(message(i))) for i in range(1, n + 1)]


def snapshot_line(seq: int, prefix: bytes, *, covered: bool = True) -> bytes:
    """A snapshot at `seq` vouching for `prefix` (its size and CRC, or none when not covered)."""
    body: dict = {"type": "snapshot", "through_seq": seq - 1, "state": {"subsystems": {}}}
    if covered:
        body |= {"prefix_bytes": len(prefix), "prefix_crc": f"{zlib.crc32(prefix):08x}"}
    return frame(seq, TS, orjson.dumps(body))


# ---- 10a: the legacy (checksum-less) format applies only to a legacy file -----------------------

def test_a_flipped_bit_in_the_crc_key_of_the_meta_is_damage_not_a_legacy_line() -> None:
    """Fixture: the 6-line rollout whose meta says `"crC"` and carries a corrupted sandbox value."""
    lines = rollout_bytes()
    lines[0] = lines[0].replace(b'"crc"', b'"crC"').replace(b"startup", b"stArtup")
    rollout = parse_rollout(b"".join(lines))
    assert rollout.meta is None
    assert rollout.status is Status.NO_META
    assert [(d.line, d.kind) for d in rollout.damage] == [(1, "checksum")]


def test_a_line_without_its_checksum_in_a_checksummed_file_is_damage() -> None:
    """Fixture: the 6-line rollout, line 3 with `"crC"` and an altered text."""
    lines = rollout_bytes()
    lines[2] = lines[2].replace(b'"crc"', b'"crC"').replace(b"message 2", b"message 9")
    rollout = parse_rollout(b"".join(lines))
    assert rollout.status is Status.DAMAGED
    assert [(d.line, d.kind) for d in rollout.damage] == [(3, "checksum")]
    assert [r["seq"] for r in rollout.records] == [1, 3, 4, 5]


def test_a_checksumless_last_line_of_a_checksummed_file_is_a_torn_tail() -> None:
    """Fixture: the 6-line rollout whose last line lost its checksum key."""
    lines = rollout_bytes()
    lines[-1] = lines[-1].replace(b'"crc"', b'"crC"')
    rollout = parse_rollout(b"".join(lines))
    assert rollout.status is Status.OK
    assert rollout.tail is not None and rollout.tail.line == 6
    assert [r["seq"] for r in rollout.records] == [1, 2, 3, 4]


def test_a_legacy_file_still_loads_without_checksums() -> None:
    """Fixture: a schema-1 rollout (nested payload, no checksum), as wave 1 wrote it."""
    meta = {"seq": 0, "timestamp": TS.decode(), "type": "session_meta",
            "payload": {"schema_version": 1, "thread_id": THREAD, "session_id": SESSION,
                        "cwd": "/w"}}
    line = {"seq": 1, "timestamp": TS.decode(), "type": "message",
            "payload": {"role": "user", "text": "hi"}}
    rollout = parse_rollout(orjson.dumps(meta) + b"\n" + orjson.dumps(line) + b"\n")
    assert rollout.status is Status.OK and rollout.schema_version == 1
    assert rollout.records[0]["text"] == "hi"


def test_a_crc_written_in_upper_case_hex_is_noticed() -> None:
    """Fixture: the 6-line rollout, one checksum's letters flipped to upper case (one bit each)."""
    lines = rollout_bytes()
    target = next(i for i, ln in enumerate(lines[1:], start=1) if any(c in b"abcdef" for c in
                                                                      ln[-11:-3]))
    line = lines[target]
    lines[target] = line[:-11] + line[-11:-3].upper() + line[-3:]
    assert lines[target] != line
    rollout = parse_rollout(b"".join(lines))
    assert rollout.damage or rollout.tail


# ---- seq order after the snapshot (10a) and the bytes before it (3) ----------------------------

def _write(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / f"rollout-20261129T100000Z-{SESSION}.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def _with_snapshot(after: int = 4) -> list[bytes]:
    """Meta, messages 1..3, a snapshot at seq 4 covering them, then `after` messages (5..)."""
    lines = rollout_bytes(3)
    lines.append(snapshot_line(4, b"".join(lines)))
    lines += [frame(i, TS, orjson.dumps(message(i))) for i in range(5, 5 + after)]
    return lines


def test_two_lines_swapped_after_the_snapshot_are_reported_by_a_resume_read(tmp_path: Path) -> None:
    """Fixture: meta, 3 messages, a snapshot, 4 messages of which the 2nd and 3rd swapped."""
    lines = _with_snapshot()
    lines[6], lines[7] = lines[7], lines[6]
    path = _write(tmp_path, lines)
    latest = read_latest(path)
    assert latest.from_snapshot
    assert [d.kind for d in latest.damage] == ["seq_gap", "seq_order"]
    assert latest.status is Status.DAMAGED
    full = read_rollout(path)
    assert [d.kind for d in full.damage] == ["seq_gap", "seq_order"]


def test_the_snapshot_swapped_with_the_last_line_is_never_read_as_clean(tmp_path: Path) -> None:
    """Fixture: meta, 3 messages, a snapshot, 4 messages; the snapshot and message 8 swapped.

    The reproduction of issue 12 item 10a: the window then held the snapshot alone, its prefix
    CRC still matched, and messages 5..8 vanished from a resume that said ok.
    """
    lines = _with_snapshot()
    lines[4], lines[-1] = lines[-1], lines[4]
    latest = read_latest(_write(tmp_path, lines))
    assert not latest.from_snapshot
    assert latest.status is Status.DAMAGED and "seq_order" in [d.kind for d in latest.damage]


def test_every_swap_of_two_lines_is_noticed_by_a_resume_read(tmp_path: Path) -> None:
    """Fixture: meta, 3 messages, a snapshot, 4 messages; each pair of lines swapped in turn."""
    base = _with_snapshot()
    for i in range(1, len(base)):
        for j in range(i + 1, len(base)):
            lines = list(base)
            lines[i], lines[j] = lines[j], lines[i]
            latest = read_latest(_write(tmp_path, lines))
            assert latest.damage or latest.duplicates, f"lines {i + 1} and {j + 1} swapped"


def test_a_resume_read_of_an_intact_snapshot_window_is_clean(tmp_path: Path) -> None:
    """Fixture: meta, 3 messages, a snapshot, 4 messages; nothing altered."""
    latest = read_latest(_write(tmp_path, _with_snapshot()))
    assert latest.from_snapshot and latest.status is Status.OK and latest.damage == []
    assert [r["seq"] for r in latest.records] == [4, 5, 6, 7, 8]


@pytest.mark.parametrize("inserted", [
    b"garbage that is not json\n",
    frame(3, TS, orjson.dumps(message(3))),  # a valid line re-delivered just before the snapshot
    b"\n",
])
def test_bytes_inserted_just_before_a_snapshot_line_are_never_read_as_clean(tmp_path: Path,
                                                                            inserted: bytes) -> None:
    """Fixture: meta, 3 messages, a snapshot, 4 messages; extra bytes inserted before the snapshot."""
    lines = _with_snapshot()
    lines.insert(4, inserted)
    path = _write(tmp_path, lines)
    latest = read_latest(path)
    assert not latest.from_snapshot, "the window after the snapshot cannot vouch for those bytes"
    assert latest.damage or latest.duplicates, "the full read must report the inserted line"
    assert latest.damage[0].line == 5 if latest.damage else latest.duplicates[0]["line"] == 5


def test_bytes_deleted_before_a_snapshot_line_are_never_read_as_clean(tmp_path: Path) -> None:
    """Fixture: meta, 3 messages, a snapshot, 4 messages; message 2 removed."""
    lines = _with_snapshot()
    del lines[2]
    latest = read_latest(_write(tmp_path, lines))
    assert not latest.from_snapshot
    assert [d.kind for d in latest.damage] == ["seq_gap"]


def test_a_snapshot_that_vouches_for_nothing_is_checked_by_a_full_read(tmp_path: Path) -> None:
    """Fixture: a snapshot without prefix_bytes/prefix_crc (older writer); line 3 altered."""
    lines = rollout_bytes(3)
    lines.append(snapshot_line(4, b"".join(lines), covered=False))
    lines[2] = lines[2].replace(b"message 2", b"message 7")
    latest = read_latest(_write(tmp_path, lines))
    assert not latest.from_snapshot
    assert [(d.line, d.kind) for d in latest.damage] == [(3, "checksum")]


def test_the_window_starts_after_its_meta_in_seq_order(tmp_path: Path) -> None:
    """Fixture: a snapshot whose seq is not after the meta's (crafted: meta at seq 10)."""
    meta_line = frame(10, TS, orjson.dumps(META))
    lines = [meta_line, snapshot_line(4, meta_line)]
    latest = read_latest(_write(tmp_path, lines))
    assert latest.damage, "a snapshot at seq 4 after a meta at seq 10 is out of order"


# ---- 10: crafted envelopes and meta, big integers ----------------------------------------------

@pytest.mark.parametrize("seq,why", [
    ("7", "not an integer"), (2**63, "out of range"), (MAX_SEQ + 1, "out of range"),
    (-1, "out of range"), (True, "not an integer"), (1.5, "not an integer"), (None, "not an integer"),
])
def test_a_record_with_a_crafted_seq_is_damage(seq: object, why: str) -> None:
    """Fixture: the 6-line rollout with line 3's seq replaced (its CRC recomputed)."""
    lines = rollout_bytes()
    lines[2] = framed(seq, message(2))
    rollout = parse_rollout(b"".join(lines))
    assert [(d.line, d.kind) for d in rollout.damage] == [(3, "seq_range")]
    assert why in rollout.damage[0].detail
    assert [r["seq"] for r in rollout.records] == [1, 3, 4, 5]


@pytest.mark.parametrize("field,value,why", [
    ("baseline", "x", "baseline"), ("thread_id", 7, "thread_id"), ("session_id", None, "session_id"),
    ("cwd", ["/"], "cwd"), ("title", {"a": 1}, "title"), ("forked_from", "x", "forked_from"),
    ("permissions", "all", "permissions"), ("schema_version", True, "schema_version"),
    ("baseline", {"identity": {"root_commits": "abc"}}, "root_commits"),
    ("baseline", {"branch": 3}, "branch"), ("thread_id", "../../etc", "thread_id"),
])
def test_a_meta_of_the_wrong_shape_makes_the_file_unreadable_not_a_crash(field: str, value: object,
                                                                         why: str) -> None:
    """Fixture: the 6-line rollout whose meta has one field of the wrong type (CRC valid)."""
    lines = rollout_bytes(meta={**META, field: value})
    rollout = parse_rollout(b"".join(lines))
    assert rollout.status is Status.NO_META and rollout.meta is None
    assert rollout.damage[0].kind == "invalid_meta" and why in rollout.damage[0].detail


def test_a_meta_with_a_crafted_seq_makes_the_file_unreadable() -> None:
    """Fixture: the 6-line rollout whose meta line carries seq "0" (a string)."""
    lines = rollout_bytes()
    lines[0] = framed("0", META)
    rollout = parse_rollout(b"".join(lines))
    assert rollout.status is Status.NO_META
    assert rollout.damage[0].kind == "invalid_meta" and "seq" in rollout.damage[0].detail


@pytest.mark.parametrize("literal", [b"18446744073709551616", b"-9223372036854775809",
                                     b"123456789012345678901234567890"])
def test_an_integer_beyond_64_bits_is_damage_never_a_float(literal: bytes) -> None:
    """Fixture: the 6-line rollout with an operation whose result holds a huge integer literal."""
    lines = rollout_bytes(2)
    core = (b'{"seq":3,"ts":"%s","type":"operation","operation_id":"op-1","tool":"calc",'
            b'"status":"committed","result":{"n":[1,%s]}' % (TS, literal))
    lines.append(b'%s,"crc":"%08x"}\n' % (core, zlib.crc32(core)))
    lines.append(frame(4, TS, orjson.dumps(message(4))))
    rollout = parse_rollout(b"".join(lines))
    assert [(d.line, d.kind) for d in rollout.damage] == [(4, "int_range")]
    assert "64 bits" in rollout.damage[0].detail
    assert [r["seq"] for r in rollout.records] == [1, 2, 4]


def test_a_genuine_large_float_is_kept() -> None:
    """Fixture: an operation whose result holds the float 1e20 and the largest 64-bit integers."""
    body = {"type": "operation", "operation_id": "op-1", "tool": "calc", "status": "committed",
            "result": {"f": 1e20, "u": 2**64 - 1, "i": -(2**63), "neg": -1e300}}
    data = b"".join(rollout_bytes(0)) + frame(1, TS, orjson.dumps(body))
    rollout = parse_rollout(data)
    assert rollout.damage == [] and rollout.records[0]["result"] == body["result"]


def test_a_session_meta_after_the_first_line_is_damage_never_a_record() -> None:
    """Fixture: the 6-line rollout with its meta line repeated as line 4 (found by the fuzz run:
    with the first line damaged, the repeated meta was folded as a record)."""
    lines = rollout_bytes()
    lines.insert(3, lines[0])
    rollout = parse_rollout(b"".join(lines))
    assert all(r["type"] != "session_meta" for r in rollout.records)
    assert rollout.damage and rollout.damage[0].line == 4
    lines[0] = b"garbage\n"
    damaged = parse_rollout(b"".join(lines))
    assert all(r["type"] != "session_meta" for r in damaged.records)
    assert [(d.line, d.kind) for d in damaged.damage][:2] == [(1, "unparsable"), (4, "invalid_record")]
