"""Read-only, streaming access to an agent's log file: stat, head/anchor digests, lines from an offset.

Invariants: files are opened O_RDONLY (with O_NOATIME where the kernel allows it) and nothing is
ever created, written or renamed under an agent's root; memory stays bounded whatever the file
holds — a file is read in 1 MiB chunks, and a line longer than `max_line` is skipped while
scanning for its newline, never accumulated. A `.zst` file is stream-decompressed (zstandard is
imported only then); its offsets are offsets in the decompressed stream, and it is whole only
when its last frame is: one cut inside a frame is an I/O error, never a shorter file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .base import MAX_LINE

CHUNK = 1 << 20
HEAD_BYTES = 4096
_ZST_HEADER_MAX = 18  # the longest zstd frame header (RFC 8878 3.1.1.1)
_ZST_SKIPPABLE = 0x184D2A50  # a skippable frame's magic, its low 4 bits free (RFC 8878 3.1.2)

_NOATIME = getattr(os, "O_NOATIME", 0)


@dataclass(frozen=True)
class FileStat:
    """What a cheap stat says about a file: enough to tell it is unchanged."""

    size: int
    mtime_ns: int
    inode: int


Line = tuple[int, "bytes | None", int, bool]
"""One line of a file: (offset, bytes or None when too long, length without the newline,
complete — False for a last line without its newline). A plain tuple: one is made per line."""


def stat_of(path: Path) -> FileStat:
    """Stat a file (following a symlink, as the agent itself would)."""
    st = os.stat(path)
    return FileStat(st.st_size, st.st_mtime_ns, st.st_ino)


def open_ro(path: str | os.PathLike[str]) -> int:
    """Open a regular file read-only without updating its access time when the kernel lets us.

    Anything else (a FIFO, a device such as /dev/zero behind a symlink) raises OSError: it
    would block the open or never end; O_NONBLOCK keeps a FIFO's open from waiting for a writer.
    """
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags | _NOATIME)
    except PermissionError:  # O_NOATIME needs ownership of the file
        if not _NOATIME:
            raise
        fd = os.open(path, flags)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
    return fd


def digest_range(fd: int, start: int, length: int) -> str:
    """Return the sha256 hex of `length` bytes at `start` (fewer if the file is shorter)."""
    import hashlib  # here, not at start-up: a listing that only stats files hashes nothing

    digest = hashlib.sha256()
    while length > 0:
        chunk = os.pread(fd, min(CHUNK, length), start)
        if not chunk:
            break
        digest.update(chunk)
        start += len(chunk)
        length -= len(chunk)
    return digest.hexdigest()


def fd_reader(fd: int, start: int) -> Callable[[int], bytes]:
    """Return read(n) over a plain file descriptor from `start` (positional reads, no seeking)."""
    position = start

    def read(n: int) -> bytes:
        nonlocal position
        chunk = os.pread(fd, n, position)
        position += len(chunk)
        return chunk

    return read


def zst_reader(fd: int) -> tuple[Callable[[int], bytes], BinaryIO]:
    """Return read(n) over the decompressed stream of a zstd file, and the stream to close.

    A stream zstd cannot decode raises OSError (EIO), like any other read error, and so does one
    that ends inside a frame (`zst_cut`): zstandard's reader just stops where the bytes stop.
    """
    import zstandard  # lazy: only .zst rollouts need it

    raw = os.fdopen(os.dup(fd), "rb")
    stream: Any = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)

    def read(n: int) -> bytes:
        try:
            chunk: bytes = stream.read(n)
        except zstandard.ZstdError as exc:
            raise OSError(errno.EIO, f"not a readable zstd stream ({exc})") from None
        if not chunk:
            cut = zst_cut(fd, raw.tell())  # the bytes the decoder took, even if the file grew since
            if cut is not None:
                raise OSError(errno.EIO, f"truncated zstd stream: {cut}")
        return chunk

    return read, stream


def zst_cut(fd: int, end: int) -> str | None:
    """Why the first `end` bytes of a zstd file end inside a frame (None: its last frame is whole).

    Meant for bytes the decoder took without an error, so a frame that does not fit is cut. An
    empty file holds no frame (`zstd -d` says "unexpected end of file"). A file cut exactly
    between two frames holds only whole ones: nothing tells it from a shorter whole file, and it
    reads as one.
    """
    if end == 0:
        return "an empty file holds no frame"
    start = 0
    while start < end:
        stop = _zst_frame_end(fd, start, end)
        if stop > end:
            return f"the frame at byte {start} ends past the end of the file ({end} bytes)"
        start = stop
    return None


def _zst_frame_end(fd: int, start: int, end: int) -> int:
    """Where the frame at `start` ends (past `end` when even its header or a block header is cut).

    Only headers are read, with positional reads (RFC 8878: a frame header, 3 bytes before each
    block of at most 128 KiB, a 4-byte checksum when the frame has one; a skippable frame's
    size): nothing is decompressed.
    """
    import zstandard

    head = os.pread(fd, _ZST_HEADER_MAX, start)[:end - start]
    if int.from_bytes(head[:4], "little") & 0xFFFFFFF0 == _ZST_SKIPPABLE:
        return start + 8 + int.from_bytes(head[4:8], "little") if len(head) >= 8 else end + 1
    try:
        size = zstandard.frame_header_size(head)
        if size > len(head):
            return end + 1
        checksum = zstandard.get_frame_parameters(head).has_checksum
    except zstandard.ZstdError:  # fewer bytes than a header needs
        return end + 1
    position = start + size
    while position + 3 <= end:
        block = int.from_bytes(os.pread(fd, 3, position), "little")
        position += 3 + (1 if (block >> 1) & 3 == 1 else block >> 3)  # an RLE block holds 1 byte
        if block & 1:  # the frame's last block
            return position + (4 if checksum else 0)
    return end + 1


def iter_lines(read: Callable[[int], bytes], *, start: int, max_line: int = MAX_LINE) -> Iterator[Line]:
    """Yield the lines of a stream from offset `start`; the last is incomplete when it has no newline.

    Newlines are found with bytes.find (memchr), not bytes.split, which walks the bytes one by one.
    """
    offset = start
    parts: list[bytes] = []  # the start of a line that runs past the chunk it began in
    pending = 0  # bytes of that line seen so far
    skipping = False  # that line is longer than max_line: only its length is kept
    while True:
        chunk = read(CHUNK)
        if not chunk:
            break
        find = chunk.find
        begin = 0
        while True:
            newline = find(b"\n", begin)
            if newline == -1:
                rest = len(chunk) - begin
                if rest and not skipping:
                    if pending + rest > max_line:
                        skipping, parts = True, []
                    else:
                        parts.append(chunk[begin:])
                pending += rest
                break
            length = pending + newline - begin
            if skipping or length > max_line:
                yield offset, None, length, True
            elif parts:
                yield offset, b"".join(parts) + chunk[begin:newline], length, True
            else:
                yield offset, chunk[begin:newline], length, True
            offset += length + 1
            if pending:
                parts, pending, skipping = [], 0, False
            begin = newline + 1
    if pending:
        yield offset, None if skipping else b"".join(parts), pending, False
