"""A resume that starts at a snapshot still vouches for every byte before it and for the order
after it (issue 12 items 3 and 10a), on sessions recorded through the API."""

from __future__ import annotations

import os
import random
import zlib
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.store import reader
from sessionkeeper.store.codec import frame
from sessionkeeper.store.reader import prefix_crc


def _closed_session(store_dir: Path, repo: Path, *, after: int) -> tuple[Keeper, str, Path]:
    """A session with 3 messages, an explicit snapshot, then `after` more messages, closed."""
    keeper = Keeper(store_dir)
    session = keeper.start(repo, title="snapshot integrity")
    for i in range(3):
        session.record({"type": "message", "role": "user", "text": f"before {i}"})
    session.snapshot()
    for i in range(after):
        session.record({"type": "message", "role": "user", "text": f"after {i}"})
    session.writer.recorder.flush()
    path = session.writer.path
    session.writer.close()  # no closing snapshot: the explicit one stays the latest
    keeper.live.clear()
    return keeper, session.thread_id, path


def _snapshot_index(lines: list[bytes]) -> int:
    return max(i for i, line in enumerate(lines) if b'"type":"snapshot"' in line)


def test_damage_inserted_just_before_the_snapshot_line_blocks_the_resume(store_dir: Path, repo: Path) -> None:
    """Fixture: a closed session; a garbage line inserted right before its snapshot line."""
    keeper, thread, path = _closed_session(store_dir, repo, after=2)
    lines = path.read_bytes().split(b"\n")
    at = _snapshot_index(lines)
    lines.insert(at, b'{"seq":99,"note":"inserted before the snapshot"}')
    path.write_bytes(b"\n".join(lines))
    report = keeper.check_resume(thread, workspace=str(repo))
    assert report.verdict == "blocked"
    assert [(d["line"], d["kind"]) for d in report.damaged] == [(at + 1, "checksum")]


def test_a_valid_line_inserted_just_before_the_snapshot_line_blocks_the_resume(store_dir: Path,
                                                                               repo: Path) -> None:
    """Fixture: a closed session; a well-framed line with a seq of its own inserted before the
    snapshot (damage that still parses and whose CRC is right)."""
    keeper, thread, path = _closed_session(store_dir, repo, after=2)
    lines = path.read_bytes().split(b"\n")
    at = _snapshot_index(lines)
    forged = frame(1, b"2026-11-29T10:00:00.000Z",
                   b'{"type":"message","role":"user","text":"forged"}').rstrip(b"\n")
    lines.insert(at, forged)
    path.write_bytes(b"\n".join(lines))
    report = keeper.check_resume(thread, workspace=str(repo))
    assert report.verdict == "blocked"
    assert [d["line"] for d in report.damaged] == [at + 1]


def test_the_snapshot_swapped_with_the_last_line_blocks_the_resume(store_dir: Path, repo: Path) -> None:
    """Fixture: a closed session; its snapshot line and its last line swapped."""
    keeper, thread, path = _closed_session(store_dir, repo, after=3)
    lines = path.read_bytes().split(b"\n")
    at = _snapshot_index(lines)
    lines[at], lines[-2] = lines[-2], lines[at]
    path.write_bytes(b"\n".join(lines))
    report = keeper.check_resume(thread, workspace=str(repo))
    assert report.verdict == "blocked" and report.damaged


def test_two_lines_swapped_after_the_snapshot_block_the_resume(store_dir: Path, repo: Path) -> None:
    """Fixture: a closed session; the two lines right after the snapshot swapped."""
    keeper, thread, path = _closed_session(store_dir, repo, after=3)
    lines = path.read_bytes().split(b"\n")
    at = _snapshot_index(lines)
    lines[at + 1], lines[at + 2] = lines[at + 2], lines[at + 1]
    path.write_bytes(b"\n".join(lines))
    report = keeper.check_resume(thread, workspace=str(repo))
    assert report.verdict == "blocked"
    assert {d["kind"] for d in report.damaged} == {"seq_gap", "seq_order"}


def test_an_intact_session_with_a_snapshot_resumes_ok(store_dir: Path, repo: Path) -> None:
    """Fixture: a closed session with a snapshot and 3 messages after it; nothing altered."""
    keeper, thread, _path = _closed_session(store_dir, repo, after=3)
    report = keeper.check_resume(thread, workspace=str(repo))
    assert report.verdict == "ok" and report.damaged == []


@pytest.mark.parametrize("length", [0, 1, 2, 7, 4096, (1 << 20) + 3, 3 << 20])
def test_the_prefix_crc_checked_in_two_halves_equals_zlibs(tmp_path: Path, length: int) -> None:
    """Fixture: a file of 3 MiB + 5 random bytes; the halves path forced from 1 byte on."""
    data = random.Random(length).randbytes((3 << 20) + 5)
    path = tmp_path / "bytes"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert prefix_crc(fd, length, parallel_from=1) == zlib.crc32(data[:length])
        assert prefix_crc(fd, length) == zlib.crc32(data[:length])
        assert prefix_crc(fd, len(data) + 1, parallel_from=1) is None  # the file is shorter
    finally:
        os.close(fd)


def test_damage_in_the_second_half_of_a_long_prefix_blocks_the_resume(store_dir: Path, repo: Path,
                                                                      monkeypatch) -> None:
    """Fixture: a closed session with 400 messages before its snapshot; one byte flipped at 3/4
    of the bytes before the snapshot; the two-halves check forced on (PARALLEL_PREFIX = 1)."""
    monkeypatch.setattr(reader, "PARALLEL_PREFIX", 1)
    keeper = Keeper(store_dir, snapshot_min_bytes=1 << 30)
    session = keeper.start(repo, title="long prefix")
    for i in range(400):
        session.record({"type": "message", "role": "user", "text": f"before {i} " + "p" * 200})
    session.snapshot()
    session.writer.recorder.flush()
    path = session.writer.path
    session.writer.close()
    keeper.live.clear()
    assert keeper.check_resume(session.thread_id, workspace=str(repo)).verdict == "ok"
    data = bytearray(path.read_bytes())
    snapshot_at = data.rindex(b"\n", 0, data.rindex(b'"type":"snapshot"')) + 1
    at = data.index(b"p" * 50, snapshot_at * 3 // 4)
    assert snapshot_at // 2 < at < snapshot_at
    data[at] = ord("q")
    path.write_bytes(bytes(data))
    report = keeper.check_resume(session.thread_id, workspace=str(repo))
    assert report.verdict == "blocked"
    assert [d["kind"] for d in report.damaged] == ["checksum"]
