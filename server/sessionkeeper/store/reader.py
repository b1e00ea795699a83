"""Tolerant, honest reading of a rollout: every valid record, and exactly what was wrong.

- A torn or unparsable *last* line (NUL-filled tails included) is reported as the `tail`; the
  complete prefix is used. Cutting it off and keeping it aside is `repair.quarantine_tail`.
- Damage in the middle is never skipped silently: each bad line is a `Damage` with its line number.
- Duplicate deliveries of a seq are dropped and reported; gaps and reordering are damage.
- A 0-byte file, a missing `session_meta`, a future schema version are each a distinct status.
"""

from __future__ import annotations

import gc
import os
import zlib
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import orjson

from ..events import RECORD_TYPES, SCHEMA_VERSION, schema_version_of, upcast
from .codec import LineError, unframe

Record = dict[str, Any]
_SNAPSHOT_MARK = b'"type":"snapshot"'
_CHUNK = 1 << 16


class Status(str, Enum):
    """What state a rollout is in, as a whole."""

    OK = "ok"
    DAMAGED = "damaged"  # damage in the middle: usable prefix, but not to be continued silently
    EMPTY = "empty"  # 0 bytes
    NO_META = "no_meta"  # first line is not a session_meta
    FUTURE_SCHEMA = "future_schema"  # written by a newer Session Keeper


@dataclass(frozen=True)
class Damage:
    """A bad line in the middle of a rollout."""

    line: int
    kind: str  # unparsable, checksum, seq_gap, seq_order, unknown_type, no_meta
    detail: str


@dataclass(frozen=True)
class Tail:
    """The torn last line: where it starts, how long it is, and why it is unusable."""

    line: int
    offset: int
    length: int
    reason: str


@dataclass
class Rollout:
    """A rollout as read: meta, records after it, and every problem found."""

    path: Path | None
    status: Status
    meta: Record | None = None
    records: list[Record] = field(default_factory=list)
    damage: list[Damage] = field(default_factory=list)
    duplicates: list[dict[str, Any]] = field(default_factory=list)  # re-delivered: line, seq, type, op id
    tail: Tail | None = None
    size: int = 0
    schema_version: int | None = None
    from_snapshot: bool = False  # records start at the latest snapshot, not at seq 1

    @property
    def last_seq(self) -> int:
        """The seq of the last good record (the meta's when there is nothing else; -1 without meta)."""
        if self.records:
            return self.records[-1]["seq"]
        return self.meta.get("seq", 0) if self.meta else -1

    @property
    def good_size(self) -> int:
        """Bytes of the complete prefix (the file size without a torn tail)."""
        return self.tail.offset if self.tail else self.size


def _classify(line: bytes) -> tuple[Record | None, str]:
    try:
        return unframe(line), ""
    except LineError as exc:
        reason = str(exc)
    if reason == "no checksum field":  # maybe a schema-1 record, which had no checksum
        try:
            record = orjson.loads(line)
            if isinstance(record, dict):
                return record, "legacy"
        except orjson.JSONDecodeError:
            reason = "unparsable JSON"
    return None, reason


def parse_rollout(data: bytes, *, path: Path | None = None, window: bool = False) -> Rollout:
    """Parse the bytes of a rollout (`window`: meta line + a later stretch starting at a snapshot)."""
    if not data:
        return Rollout(path, Status.EMPTY)
    lines = data.split(b"\n")
    complete = lines[:-1]
    partial = lines[-1]
    gc_was_enabled = gc.isenabled()
    gc.disable()  # keeping 100k dicts alive triggers needless cyclic collections
    try:
        rollout = _parse_lines(complete, partial, size=len(data), path=path, window=window)
    finally:
        if gc_was_enabled:
            gc.enable()
    rollout.from_snapshot = window
    return rollout


def _parse_lines(lines: list[bytes], partial: bytes, *, size: int, path: Path | None,
                 window: bool) -> Rollout:
    rollout = Rollout(path, Status.OK, size=size)
    offsets_end = size - len(partial)
    if partial:
        reason = "NUL bytes" if not partial.strip(b"\x00") else "torn: no newline"
        rollout.tail = Tail(len(lines) + 1, offsets_end, len(partial), reason)
    elif lines:
        record, why = _classify(lines[-1])
        if record is None:  # a complete but unusable last line is a torn tail too
            last = lines.pop()
            rollout.tail = Tail(len(lines) + 1, offsets_end - len(last) - 1, len(last) + 1, why)
    if not lines:
        rollout.status = Status.NO_META if rollout.tail is None else Status.EMPTY
        return rollout
    meta, why = _classify(lines[0])
    if meta is None or meta.get("type") != "session_meta":
        rollout.status = Status.NO_META
        rollout.damage.append(Damage(1, "no_meta", why or f"first record is {(meta or {}).get('type')!r}"))
        first_index = 1 if meta is None else 0
    else:
        version = schema_version_of(meta)
        rollout.schema_version = version
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            rollout.status = Status.FUTURE_SCHEMA
            rollout.meta = meta
            return rollout
        rollout.meta = upcast(meta, version) if version < SCHEMA_VERSION else meta
        first_index = 1
    _fold_records(rollout, lines, first_index, window=window)
    return rollout


def _fold_records(rollout: Rollout, lines: list[bytes], first_index: int, *, window: bool) -> None:
    version = rollout.schema_version or SCHEMA_VERSION
    records = rollout.records
    append = records.append
    expected = rollout.meta.get("seq", 0) + 1 if rollout.meta is not None and not window else None
    known = RECORD_TYPES
    skipped = 0  # damaged lines since the last good record: they explain a jump in seq
    for number, line in enumerate(lines[first_index:], start=first_index + 1):
        record = _fast_unframe(line)
        if record is None:
            record, why = _classify(line)
            if record is None:
                rollout.damage.append(Damage(number, _kind(why), why))
                skipped += 1
                continue
            if version >= 2:
                rollout.damage.append(Damage(number, "checksum", "record has no checksum"))
                skipped += 1
                continue
            record = upcast(record, version)
        seq = record.get("seq")
        if not isinstance(seq, int):
            rollout.damage.append(Damage(number, "unparsable", "record has no integer seq"))
            continue
        if expected is not None and seq != expected and seq != expected + skipped:
            if records and seq <= records[-1]["seq"]:
                rollout.duplicates.append({"line": number, "seq": seq, "type": record.get("type"),
                                           "operation_id": record.get("operation_id")})
                if seq != records[-1]["seq"] or _differs(records, seq, record):
                    rollout.damage.append(Damage(number, "seq_order", f"seq {seq} after {expected - 1}"))
                continue
            rollout.damage.append(Damage(number, "seq_gap", f"expected seq {expected}, found {seq}"))
        expected = seq + 1
        skipped = 0
        if record.get("type") not in known:
            rollout.damage.append(Damage(number, "unknown_type", f"unknown type {record.get('type')!r}"))
            continue
        append(record)
    if rollout.damage and rollout.status is Status.OK:
        rollout.status = Status.DAMAGED


def _fast_unframe(line: bytes) -> Record | None:
    """codec.unframe for the common, valid line without raising; None sends it the slow way.

    A record whose `crc` is its last field (as the recorder writes it) covers line[:-18].
    """
    try:
        record = orjson.loads(line)
        if zlib.crc32(line[:-18]) != int(record.pop("crc"), 16):
            return None
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return record


def _differs(records: list[Record], seq: int, record: Record) -> bool:
    previous = records[-1]
    return {k: v for k, v in previous.items() if k != "ts"} != {
        k: v for k, v in record.items() if k != "ts"
    }


def _kind(reason: str) -> str:
    return "checksum" if "checksum" in reason else "unparsable"


def read_bytes(path: Path) -> bytes:
    """Read a rollout file without following a symlink in its place."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def read_rollout(path: Path) -> Rollout:
    """Read and check a whole rollout file."""
    return parse_rollout(read_bytes(path), path=path)


def read_latest(path: Path, *, verify: bool = True) -> Rollout:
    """Read the meta, the latest snapshot and the records after it.

    Parsing costs the snapshot and its tail, whatever the history. With `verify`, the bytes
    before the snapshot are checked against the CRC the snapshot carries (one pass at CRC speed,
    no parsing); on a mismatch the file is read in full, so the damage is reported with its line
    numbers. Falls back to a full read when there is no snapshot after the meta.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        start = _find_snapshot(fd, size)
        if start is None:
            return read_rollout(path)
        head = _first_line(fd)
        tail = os.pread(fd, size - start, start)
    finally:
        os.close(fd)
    rollout = parse_rollout(head + tail, path=path, window=True)
    if verify and not _prefix_intact(path, rollout.records[0] if rollout.records else {}):
        return read_rollout(path)
    rollout.size = size
    shift = start - len(head)
    if rollout.tail is not None:
        t = rollout.tail
        rollout.tail = Tail(0, t.offset + shift, t.length, t.reason)
    # line numbers inside a window are unknown without counting the skipped lines: say so
    rollout.damage = [Damage(0, d.kind, f"{d.detail} (at byte {shift}+, after the snapshot)")
                      for d in rollout.damage]
    return rollout


def _prefix_intact(path: Path, snapshot: Record) -> bool:
    """True when the bytes before a snapshot still have the CRC it recorded (or it has none)."""
    expected, length = snapshot.get("prefix_crc"), snapshot.get("prefix_bytes")
    if expected is None or length is None:
        return True  # written before snapshots carried it
    crc = 0
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        offset = 0
        while offset < length:
            chunk = os.pread(fd, min(1 << 20, length - offset), offset)
            if not chunk:
                return False
            crc = zlib.crc32(chunk, crc)
            offset += len(chunk)
    finally:
        os.close(fd)
    return f"{crc:08x}" == expected


def _first_line(fd: int) -> bytes:
    out = b""
    offset = 0
    while b"\n" not in out:
        chunk = os.pread(fd, _CHUNK, offset)
        if not chunk:
            break
        out += chunk
        offset += len(chunk)
    return out[: out.index(b"\n") + 1] if b"\n" in out else out


def _find_snapshot(fd: int, size: int) -> int | None:
    """Offset of the last valid snapshot line after line 1, scanning backwards; None if none."""
    overlap = len(_SNAPSHOT_MARK)
    end = size
    while end > 0:
        start = max(0, end - _CHUNK)
        block = os.pread(fd, end - start + overlap, start)
        pos = block.rfind(_SNAPSHOT_MARK)
        while pos != -1:
            line_start = _line_start(fd, start + pos)
            if line_start and _is_snapshot_line(_line_at(fd, line_start)):
                return line_start
            pos = block.rfind(_SNAPSHOT_MARK, 0, pos)
        end = start
    return None


def _line_start(fd: int, mark: int) -> int | None:
    """Start of the line holding a mark that sits in the envelope (within 120 bytes of the start)."""
    lo = max(0, mark - 120)
    before = os.pread(fd, mark - lo, lo)
    newline = before.rfind(b"\n")
    if newline == -1:
        return 0 if lo == 0 else None
    return lo + newline + 1


def _line_at(fd: int, offset: int) -> bytes:
    parts = []
    while True:
        chunk = os.pread(fd, _CHUNK, offset)
        if not chunk:
            return b""  # no newline: a torn line is never a usable snapshot
        cut = chunk.find(b"\n")
        if cut != -1:
            parts.append(chunk[:cut])
            return b"".join(parts)
        parts.append(chunk)
        offset += len(chunk)


def _is_snapshot_line(line: bytes) -> bool:
    try:
        return unframe(line).get("type") == "snapshot"
    except LineError:
        return False
