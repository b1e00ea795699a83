"""The recorder/reader contract, run against every sink (file and memory)."""

from __future__ import annotations

import os
import threading
import time
import zlib
from pathlib import Path

import orjson
import pytest

from sessionkeeper.errors import DurabilityLost, SessionReadOnly, StoreDamaged, StoreFull
from sessionkeeper.events import Durability
from sessionkeeper.schema import SessionMeta
from sessionkeeper.session.validate import event_body
from sessionkeeper.store.reader import Status, parse_rollout
from sessionkeeper.store.recorder import Recorder
from sessionkeeper.store.sinks import FileSink, MemorySink

META = SessionMeta(thread_id="0" * 8 + "-0000-4000-8000-" + "0" * 12,
                   session_id="1" * 8 + "-1111-4111-8111-" + "1" * 12, cwd="/w")


def _msg(i: int) -> bytes:
    return event_body({"type": "message", "role": "user", "text": f"message {i}"})


class Harness:
    """A sink plus a way to read back exactly what it holds."""

    def __init__(self, kind: str, tmp: Path) -> None:
        self.kind = kind
        self.path = tmp / "rollout-20260101T000000000Z-11111111-1111-4111-8111-111111111111.jsonl"
        self.sink = FileSink(self.path) if kind == "file" else MemorySink()

    def data(self) -> bytes:
        return self.path.read_bytes() if self.kind == "file" else bytes(self.sink.data)


@pytest.fixture(params=["file", "memory"])
def harness(request, tmp_path) -> Harness:
    """A fresh sink of each kind."""
    return Harness(request.param, tmp_path)


def test_appended_records_read_back_in_order_with_contiguous_seq(harness):
    """Fixture: harness (file and memory sinks)."""
    rec = Recorder(harness.sink)
    rec.append([event_body(META)], Durability.DURABLE)
    acks = rec.append([_msg(i) for i in range(100)])
    rec.close()
    assert [a.seq for a in acks] == list(range(1, 101))
    rollout = parse_rollout(harness.data())
    assert rollout.status is Status.OK
    assert [r["seq"] for r in rollout.records] == list(range(1, 101))
    assert rollout.records[41]["text"] == "message 41"
    assert rollout.meta["session_id"] == META.session_id


def test_written_ack_means_bytes_are_in_the_sink(harness):
    """Fixture: harness; every `written` ack is readable before close()."""
    rec = Recorder(harness.sink)
    rec.append([event_body(META)])
    ack = rec.append([_msg(1)], Durability.WRITTEN)[0]
    assert ack.durability is Durability.WRITTEN
    assert parse_rollout(harness.data()).last_seq == 1
    rec.close()


def test_none_durability_buffers_until_flush(harness):
    """Fixture: harness; `none` records stay in the process until a flush."""
    rec = Recorder(harness.sink)
    rec.append([event_body(META)])
    ack = rec.append([_msg(1)], Durability.NONE)[0]
    assert ack.durability is Durability.NONE
    assert parse_rollout(harness.data()).last_seq == 0
    rec.flush()
    assert parse_rollout(harness.data()).last_seq == 1
    rec.close()


def test_concurrent_durable_writers_share_fsyncs_and_never_interleave(harness):
    """Fixture: harness whose fsync takes 2 ms; 8 threads x 200 durable records -> one valid line
    each, contiguous seq, and far fewer fsyncs than records (waiters share them)."""
    syncs = 0
    inner = harness.sink.sync

    def slow_sync():
        nonlocal syncs
        syncs += 1
        time.sleep(0.002)  # a disk flush takes time: writers arriving meanwhile must share the next
        inner()

    harness.sink.sync = slow_sync
    rec = Recorder(harness.sink)
    rec.append([event_body(META)], Durability.DURABLE)
    levels: list[Durability] = []

    def work():
        levels.extend(rec.append([_msg(i)], Durability.DURABLE)[0].durability for i in range(200))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rec.close()
    assert levels == [Durability.DURABLE] * 1600
    rollout = parse_rollout(harness.data())
    assert rollout.status is Status.OK
    assert [r["seq"] for r in rollout.records] == list(range(1, 1601))
    assert syncs <= 1600 // 2, f"{syncs} fsyncs for 1600 durable records: not shared"


def test_failed_fsync_makes_the_session_read_only_for_good(harness):
    """Fixture: harness whose sync raises EIO once; never retried, never reported durable."""
    rec = Recorder(harness.sink)
    rec.append([event_body(META)], Durability.DURABLE)

    def broken_sync():
        raise OSError(5, "Input/output error")

    harness.sink.sync = broken_sync
    with pytest.raises(DurabilityLost):
        rec.append([_msg(1)], Durability.DURABLE)
    with pytest.raises(SessionReadOnly):
        rec.append([_msg(2)], Durability.WRITTEN)
    assert rec.read_only_reason.startswith("needs recovery")


def test_failed_write_is_cut_off_and_its_seq_reused(harness):
    """Fixture: harness whose write writes half a line then fails with ENOSPC."""
    rec = Recorder(harness.sink)
    rec.append([event_body(META)], Durability.DURABLE)
    rec.append([_msg(1)])
    real_write = harness.sink.write

    def full_disk(data):
        real_write(data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    harness.sink.write = full_disk
    with pytest.raises(StoreFull):
        rec.append([_msg(2)])
    harness.sink.write = real_write
    assert rec.append([_msg(3)])[0].seq == 2
    rec.close()
    rollout = parse_rollout(harness.data())
    assert rollout.status is Status.OK and rollout.tail is None
    assert [r["text"] for r in rollout.records] == ["message 1", "message 3"]


def test_closed_recorder_refuses_records(harness):
    """Fixture: harness."""
    rec = Recorder(harness.sink)
    rec.append([event_body(META)])
    rec.close()
    with pytest.raises(SessionReadOnly):
        rec.append([_msg(1)])


def test_every_line_carries_a_checksum_that_catches_a_flipped_bit(harness):
    """Fixture: harness; flip one bit inside a middle line that still parses as JSON."""
    rec = Recorder(harness.sink)
    rec.append([event_body(META)])
    rec.append([_msg(i) for i in range(3)])
    rec.close()
    data = bytearray(harness.data())
    lines = bytes(data).split(b"\n")
    target = lines[2]
    pos = sum(len(x) + 1 for x in lines[:2]) + target.index(b"message 1") + 8
    data[pos] ^= 0x01  # "message 1" -> "message 0": still valid JSON
    orjson.loads(bytes(data).split(b"\n")[2])
    rollout = parse_rollout(bytes(data))
    assert rollout.status is Status.DAMAGED
    assert [(d.line, d.kind) for d in rollout.damage] == [(3, "checksum")]
    assert [r["seq"] for r in rollout.records] == [1, 3]


def test_a_failed_write_that_loses_acknowledged_buffered_records_makes_the_session_read_only(harness):
    """Fixture: harness; two `none` records buffered, then the flushing write fails (ENOSPC)."""
    rec = Recorder(harness.sink)
    rec.append([event_body(META)], Durability.DURABLE)
    rec.append([_msg(1), _msg(2)], Durability.NONE)

    def full_disk(data):
        raise OSError(28, "No space left on device")

    harness.sink.write = full_disk
    with pytest.raises(DurabilityLost, match="2 acknowledged buffered"):
        rec.append([_msg(3)], Durability.WRITTEN)
    with pytest.raises(SessionReadOnly):
        rec.append([_msg(4)])


def test_the_running_crc_covers_every_byte_written_whatever_the_mix_of_appends(harness):
    """Fixture: harness; single, batched, buffered and large (> 64 KB) appends, CRC read between."""
    rec = Recorder(harness.sink)
    rec.append([event_body(META)], Durability.DURABLE)
    assert rec.crc == zlib.crc32(harness.data())
    for i in range(300):  # about 18 KB per 300: several batches folded without a read
        rec.append([_msg(i)])
    rec.append([_msg(i) for i in range(50)])
    rec.append([_msg(1), _msg(2)], Durability.NONE)
    rec.flush()
    assert (rec.size, rec.crc) == (len(harness.data()), zlib.crc32(harness.data()))
    big = event_body({"type": "message", "role": "user", "text": "x" * 200_000})
    rec.append([big])
    rec.append([_msg(3)])
    assert (rec.size, rec.crc) == (len(harness.data()), zlib.crc32(harness.data()))
    rec.close()


def test_a_recorder_continuing_a_file_continues_its_crc(harness):
    """Fixture: harness written by one recorder, then continued by a second one given size + CRC."""
    first = Recorder(harness.sink)
    first.append([event_body(META)] + [_msg(i) for i in range(5)])
    size, crc = first.size, first.crc
    second = Recorder(harness.sink, next_seq=first.next_seq, size=size, crc=crc)
    for i in range(2000):
        second.append([_msg(i)])
    assert second.crc == zlib.crc32(harness.data())
    assert parse_rollout(harness.data()).last_seq == 2005


def test_a_rollout_cut_under_its_writer_is_noticed_and_makes_the_recorder_read_only(harness):
    """Fixture: harness whose bytes are cut short behind the recorder's back, then 2,000 appends."""
    rec = Recorder(harness.sink)
    rec.append([event_body(META)], Durability.DURABLE)
    if harness.kind == "file":
        os.truncate(harness.path, 10)
    else:
        del harness.sink.data[10:]
    with pytest.raises(StoreDamaged, match="expected"):
        for i in range(2000):  # far more than one batch: the sink is checked with every batch
            rec.append([_msg(i)])
    with pytest.raises(SessionReadOnly):
        rec.append([_msg(0)])
