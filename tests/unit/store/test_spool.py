"""The spool of a session's tool hooks (`store.spool`): framing, appends, taking, torn and damaged
lines, with real files in a temporary journal store."""

from __future__ import annotations

import os
from pathlib import Path

from sessionkeeper.store import spool

SID = "5c7b1e2a-3d4f-4a6b-8c9d-0e1f2a3b4c5d"


def _root(tmp_path: Path) -> str:
    root = tmp_path / "journal"
    root.mkdir(mode=0o700)
    spool.create(str(root), SID)
    return str(root)


def test_a_framed_line_reads_back_and_any_changed_byte_is_damage() -> None:
    """No fixture: a line framed with its CRC; each of its bytes flipped in turn."""
    line = spool.frame(b'{"event":"PreToolUse","call":"toolu_1"}')
    assert line.endswith(b'"}\n') and spool.unframe(line[:-1]) == {"event": "PreToolUse",
                                                                     "call": "toolu_1"}
    for at in range(len(line) - 1):
        bad = bytearray(line[:-1])
        bad[at] ^= 0x01
        assert spool.unframe(bytes(bad)) is None, at


def test_a_journal_spool_starts_with_a_header_and_keeps_calls_in_order(tmp_path: Path) -> None:
    """Fixture: `tmp_path`; a spool created twice (the second is a no-op), three calls appended."""
    root = _root(tmp_path)
    spool.create(root, SID)
    ends = [spool.append(root, SID, b'{"n":%d}' % n) for n in range(3)]
    lines = spool.read(spool.spool_path(root, SID))
    assert lines.token is not None and lines.damaged == [] and not lines.unfinished
    assert [(end, call) for end, call in lines.calls] == [(ends[n], {"n": n}) for n in range(3)]
    assert os.stat(spool.spool_path(root, SID)).st_mode & 0o777 == 0o600


def test_a_session_without_a_spool_is_told_and_nothing_is_written(tmp_path: Path) -> None:
    """Fixture: `tmp_path`; an append for a session whose journal (so spool) does not exist."""
    root = tmp_path / "journal"
    root.mkdir()
    assert spool.append(str(root), SID, b'{"n":1}') is None
    assert not (root / "spool").exists()


def test_a_line_a_killed_writer_left_torn_is_told_apart_and_the_next_call_is_kept(
        tmp_path: Path) -> None:
    """Fixture: `tmp_path`; half a line written raw (a hook killed mid-write), then a call."""
    root = _root(tmp_path)
    spool.append(root, SID, b'{"n":1}')
    with open(spool.spool_path(root, SID), "ab") as handle:
        handle.write(spool.frame(b'{"n":2}')[:7])
    lines = spool.read(spool.spool_path(root, SID))
    assert lines.unfinished and [c for _e, c in lines.calls] == [{"n": 1}]
    spool.append(root, SID, b'{"n":3}')
    lines = spool.read(spool.spool_path(root, SID))
    assert [c for _e, c in lines.calls] == [{"n": 1}, {"n": 3}]
    assert len(lines.torn) == 1 and lines.damaged == [] and not lines.unfinished


def test_a_damaged_line_in_the_middle_is_reported_and_the_calls_around_it_kept(
        tmp_path: Path) -> None:
    """Fixture: `tmp_path`; three calls, one byte of the second flipped on disk."""
    root = _root(tmp_path)
    ends = [spool.append(root, SID, b'{"n":%d}' % n) for n in range(3)]
    path = spool.spool_path(root, SID)
    data = bytearray(Path(path).read_bytes())
    data[ends[0] + 3] ^= 0x20
    Path(path).write_bytes(bytes(data))
    lines = spool.read(path)
    assert [c for _e, c in lines.calls] == [{"n": 0}, {"n": 2}]
    assert [offset for offset, _why in lines.damaged] == [ends[0]] and lines.torn == []


def test_taking_a_spool_leaves_a_fresh_one_and_every_call_in_exactly_one_file(
        tmp_path: Path) -> None:
    """Fixture: `tmp_path`; calls, a take, more calls, a second take."""
    root = _root(tmp_path)
    assert spool.take(root, SID) == []  # a header alone: nothing to take
    spool.append(root, SID, b'{"n":1}')
    first = spool.take(root, SID)
    spool.append(root, SID, b'{"n":2}')
    assert spool.pending(root, SID)
    both = spool.take(root, SID)
    assert len(first) == 1 and both[0] == first[0] and len(both) == 2
    calls = [c for path in both for _e, c in spool.read(path).calls]
    assert calls == [{"n": 1}, {"n": 2}]
    assert spool.read(spool.spool_path(root, SID)).calls == []
    tokens = {spool.read(p).token for p in [*both, spool.spool_path(root, SID)]}
    assert len(tokens) == 3
    for path in both:
        os.unlink(path)
    assert not spool.pending(root, SID)


def test_known_paths_add_up_and_are_replaced_whole(tmp_path: Path) -> None:
    """Fixture: `tmp_path`; paths added twice (a repeat, read once), then replaced by a fold's list."""
    root = _root(tmp_path)
    spool.add_known(root, SID, ["/w/a.py", "/w/b.py"])
    spool.add_known(root, SID, ["/w/a.py"])
    assert spool.known_paths(root, SID) == ["/w/a.py", "/w/b.py"]
    spool.set_known(root, SID, ["/w/c.py", "/w/c.py"])
    assert spool.known_paths(root, SID) == ["/w/c.py"]
