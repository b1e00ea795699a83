"""The rewinds subsystem, the rewind record rules, the content vocabulary and CLI sizes (no repo)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from sessionkeeper.cli.content import size
from sessionkeeper.errors import InvalidEvent
from sessionkeeper.events import blob_refs, describe
from sessionkeeper.recovery.baseline import current_workspace
from sessionkeeper.recovery.subsystems.file_history import NOT_CAPTURED, FileHistory
from sessionkeeper.recovery.subsystems.rewinds import Rewinds
from sessionkeeper.session.validate import validate_event
from tests.unit._recovery import folded, rec


def begin(seq: int, to_seq: int, *, undo_of: int | None = None, **planned: str) -> dict[str, Any]:
    """A stored rewind begin record."""
    return rec(seq, "lifecycle", source="rewind", reason="r", rewind={
        "stage": "begin", "to_seq": to_seq, "undo_of": undo_of, "planned": planned})


def end(seq: int, begin_seq: int, to_seq: int, *, undo_of: int | None = None,
        **outcomes: str) -> dict[str, Any]:
    """A stored rewind end record."""
    return rec(seq, "lifecycle", source="rewind", reason="done", rewind={
        "stage": "end", "to_seq": to_seq, "undo_of": undo_of, "begin_seq": begin_seq,
        "outcomes": outcomes})


def test_a_begin_without_its_end_is_interrupted_and_reported(tmp_path: Path) -> None:
    """Fixture: a begin record for a.py, no end (a crash), and an empty workspace."""
    sub = folded(Rewinds, rec(1, "lifecycle", source="startup"), begin(5, 2, a="restore"))
    interrupted = sub.interrupted()
    assert interrupted is not None and interrupted["seq"] == 5 and sub.latest() is None
    [finding] = sub.validate(current_workspace(str(tmp_path)), {}).invalidations
    assert finding.subsystem == "rewinds" and "did not finish" in finding.reason


def test_undo_walks_back_through_rewinds_and_skips_those_undone() -> None:
    """Fixture: rewind R1 (seq 5), rewind R2 (seq 9), a complete undo of R2, and one of nothing."""
    sub = folded(Rewinds, begin(5, 2), end(7, 5, 2, a="written"),
                 begin(9, 3), end(11, 9, 3, b="written"))
    assert sub.latest()["seq"] == 9
    sub.apply(begin(13, 8, undo_of=9))
    sub.apply(end(15, 13, 8, undo_of=9, b="written"))
    assert sub.latest()["seq"] == 5
    sub.apply(begin(17, 4, undo_of=5))
    sub.apply(end(19, 17, 4, undo_of=5, a="skipped"))  # refused: R1 stays undoable
    assert sub.latest()["seq"] == 5
    assert sub.interrupted() is None and sub.headline().startswith("4 rewind(s)")


def test_a_seen_version_is_no_version_and_a_hashed_one_was_never_captured() -> None:
    """Fixture: file_change records as Session writes them: seen, captured, client-hashed."""
    sub = folded(FileHistory,
                 rec(1, "file_change", path="a.py", change="seen", author="external",
                     after_hash="h0", content="stored"),
                 rec(2, "file_change", path="a.py", before_hash="h0", before_content="stored",
                     after_hash="h1", content="stored", change="modify"),
                 rec(3, "file_change", path="b.py", after_hash="h2"),
                 rec(4, "file_change", path="c.bin", after_hash="h3", content="binary"))
    assert sub.files["a.py"] == [{"seq": 2, "hash": "h1", "author": "agent", "change": "modify",
                                  "before_hash": "h0"}]
    assert sub.seen["a.py"]["hash"] == "h0" and sub.before("a.py") == {"hash": "h0",
                                                                       "content": None}
    assert sub.files["b.py"][0]["content"] == NOT_CAPTURED and sub.not_kept("h3") == "binary"
    assert sub.hashes() == {"h0", "h1", "h2", "h3"} and sub.needed() == {"h0", "h1", "h2", "h3"}


def test_an_old_snapshot_marks_its_versions_as_never_captured() -> None:
    """Fixture: a file_history snapshot of a build before content was kept (no format key)."""
    sub = FileHistory()
    sub.restore({"files": {"a.py": [{"seq": 1, "hash": "h1", "author": "agent"}]}})
    assert sub.files["a.py"][0]["content"] == NOT_CAPTURED


def test_only_stored_content_names_a_blob() -> None:
    """Fixture: records with stored, hash-only and unknown content."""
    assert blob_refs({"type": "file_change", "after_hash": "a", "content": "stored",
                      "before_hash": "b", "before_content": "stored"}) == ["a", "b"]
    assert blob_refs({"type": "file_change", "after_hash": "a", "content": "binary"}) == []
    assert blob_refs({"type": "file_change", "after_hash": "a"}) == []
    assert blob_refs({"type": "lifecycle", "after_hash": "a", "content": "stored"}) == []


def test_rewind_records_are_checked_and_described() -> None:
    """Fixture: lifecycle and file_change records of a rewind, valid and not."""
    ok = validate_event({"type": "lifecycle", "source": "rewind", "reason": "to seq 3",
                         "rewind": {"stage": "begin", "to_seq": 3, "planned": {"a": "restore"}}})
    assert ok.rewind is not None
    for bad in ({"type": "lifecycle", "source": "rewind"},
                {"type": "lifecycle", "source": "clear", "rewind": {"stage": "begin", "to_seq": 1}},
                {"type": "lifecycle", "source": "rewind", "rewind": {"stage": "end", "to_seq": 1}},
                {"type": "lifecycle", "source": "rewind",
                 "rewind": {"stage": "begin", "to_seq": 1, "planned": {"a": "explode"}}},
                {"type": "file_change", "path": "a", "rewind_seq": 4},
                {"type": "file_change", "path": "a", "content": "zipped"}):
        with pytest.raises(InvalidEvent):
            validate_event(bad)
    assert describe(begin(5, 2, a="restore", b="delete")) == "rewind to seq 2: 2 file(s) planned"
    assert describe(end(7, 5, 2, a="written", b="skipped")) == "rewind to seq 2 done: 1 file(s) changed"
    assert describe({"type": "file_change", "path": "a.py", "author": "rewind",
                     "rewind_seq": 5}) == "a.py by rewind (rewind of seq 5)"
    assert describe({"type": "file_change", "path": "a.py", "change": "seen"}) == "a.py seen"


@pytest.mark.parametrize(("text", "expected"), [
    ("4096", 4096), ("1K", 1024), ("10M", 10 << 20), ("2g", 2 << 30), ("500MB", 500 << 20),
    ("3MiB", 3 << 20)])
def test_sizes_read_like_people_write_them(text: str, expected: int) -> None:
    """Fixture: sizes as given on the command line."""
    assert size(text) == expected


def test_a_size_that_is_no_size_is_a_usage_error() -> None:
    """Fixture: words that are no sizes."""
    for text in ("", "ten", "5X", "-1"):
        with pytest.raises(argparse.ArgumentTypeError):
            size(text)
