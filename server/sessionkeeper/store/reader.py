"""Reading rollout files: whole, or from the latest snapshot on, never through a symlink.

A whole read parses every line (`rollout.parse_rollout`). A read from the latest snapshot parses
only the meta line, the snapshot and what follows it — and vouches for every byte before the
snapshot by its size and CRC, else falls back to a whole read, which reports the damage with its
line numbers (see `read_latest`). The parsed types are `rollout`'s, re-exported here.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from .codec import crc32_combine_function, crc32_function, decode
from .rollout import Damage, Record, Rollout, Status, Tail, parse_rollout

__all__ = ["Damage", "Record", "Rollout", "Status", "Tail", "parse_rollout", "read_bytes",
           "read_latest", "read_rollout"]

_SNAPSHOT_MARK = b'"type":"snapshot"'
_CHUNK = 1 << 16
_PREFIX_CHUNK = 1 << 20  # bytes CRC-checked per read: bounded memory, few calls, cache-sized
PARALLEL_PREFIX = 32 << 20  # a prefix this long is CRC-checked in two halves on two threads


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

    Parsing costs the snapshot and its tail, whatever the history. With `verify`, every byte
    before the snapshot line is checked: the snapshot carries the size and CRC of exactly the
    bytes before its own line (one pass at CRC speed, no parsing). A snapshot that vouches for
    other bytes (some inserted or removed before it, or changed) or for none (an older writer)
    sends the read to a full read, which reports the damage with its line numbers. Falls back to
    a full read too when there is no snapshot after the meta.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        start = _find_snapshot(fd, size)
        if start is None:
            return read_rollout(path)
        head = _first_line(fd)
        rollout = parse_rollout(head + os.pread(fd, size - start, start), path=path, window=True)
        first = rollout.records[0] if rollout.records else {}
        if rollout.meta is None or first.get("type") != "snapshot" or (
                verify and not _prefix_intact(fd, first, start)):
            return read_rollout(path)
    finally:
        os.close(fd)
    rollout.size = size
    shift = start - len(head)
    if rollout.tail is not None:
        t = rollout.tail
        rollout.tail = Tail(0, t.offset + shift, t.length, t.reason)
    # line numbers inside a window are unknown without counting the skipped lines: say so
    rollout.damage = [Damage(0, d.kind, f"{d.detail} (at byte {shift}+, after the snapshot)")
                      for d in rollout.damage]
    return rollout


def _prefix_intact(fd: int, snapshot: Record, start: int) -> bool:
    """True when the snapshot at `start` vouches for exactly the bytes before it, and they match."""
    expected, length = snapshot.get("prefix_crc"), snapshot.get("prefix_bytes")
    if not isinstance(expected, str) or not isinstance(length, int) or length != start:
        return False
    crc = prefix_crc(fd, length)
    return crc is not None and f"{crc:08x}" == expected


def prefix_crc(fd: int, length: int, *, parallel_from: int | None = None) -> int | None:
    """The CRC32 of a file's first `length` bytes (None if it is shorter). From `parallel_from`
    bytes on (default PARALLEL_PREFIX), with two CPUs, its halves are checked at once — pread
    and zlib-ng's CRC run without the GIL — and their CRCs combined."""
    combine = crc32_combine_function()
    least = PARALLEL_PREFIX if parallel_from is None else parallel_from
    if length < least or combine is None or (os.cpu_count() or 1) < 2:
        return _range_crc(fd, 0, length)
    half = length // 2
    tail: list[int | None | BaseException] = []

    def check_tail() -> None:
        try:
            tail.append(_range_crc(fd, half, length))
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            tail.append(exc)

    worker = threading.Thread(target=check_tail, name="sessionkeeper-prefix-crc", daemon=True)
    worker.start()
    try:
        head = _range_crc(fd, 0, half)
    finally:
        worker.join()  # the fd stays open until both halves are read
    if isinstance(tail[0], BaseException):
        raise tail[0]
    if head is None or tail[0] is None:
        return None
    return combine(head, tail[0], length - half)


def _range_crc(fd: int, offset: int, end: int) -> int | None:
    """The CRC32 of bytes [offset, end) of a file (None if it ends before `end`)."""
    crc32 = crc32_function()
    crc = 0
    while offset < end:
        chunk = os.pread(fd, min(_PREFIX_CHUNK, end - offset), offset)
        if not chunk:
            return None
        crc = crc32(chunk, crc)
        offset += len(chunk)
    return crc


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
    record = decode(line)
    return record is not None and record.get("type") == "snapshot"
