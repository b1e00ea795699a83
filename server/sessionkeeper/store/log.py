"""Reading a thread's records back from its rollouts by seq: what snapshots refer to, not copy.

A snapshot keeps message bodies and large payloads out of itself (they are in the log already);
the subsystems that need them back (the conversation, a large operation result) ask here.
Invariants: records come in seq order, only those with `after < seq <= through`, each line's
checksum verified (a damaged line is skipped here — the resume check reports it); a rollout
another process moved meanwhile (archived) is found again; memory is bounded by one chunk plus
the longest line; nothing is written.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import StoreDamaged, UnknownThread
from ..events import Record
from .codec import decode

if TYPE_CHECKING:
    from .store import Store

LogReader = Callable[[int, int, "frozenset[str] | None"], Iterable[Record]]
"""(after, through, types or None for all) -> the thread's records with after < seq <= through."""

_CHUNK = 1 << 20
_TRIES = 10  # reads of a thread whose rollouts another process keeps moving (archive, unarchive)


def _open(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)


def lines(path: Path | int, *, offset: int = 0) -> Iterator[bytes]:
    """The complete lines of a file (or of an open descriptor, left open) from `offset` on (a torn
    last line is left out), streamed."""
    fd = path if isinstance(path, int) else _open(path)
    try:
        carry = b""
        while chunk := os.pread(fd, _CHUNK, offset):
            offset += len(chunk)
            parts = (carry + chunk).split(b"\n")
            carry = parts.pop()
            yield from parts
    finally:
        if not isinstance(path, int):
            os.close(fd)


def _open_moved(store: Store, relpath: str) -> int:
    """A rollout opened where its row says, else at its other place (another process archived
    or unarchived it meanwhile); FileNotFoundError when it is at neither."""
    path = store.layout.resolve(relpath)
    try:
        return _open(path)
    except FileNotFoundError:
        archived = store.layout.archived in path.parents
        try:
            other = store.layout.live_path(path) if archived else store.layout.archived_path(path)
        except (ValueError, StoreDamaged):
            raise FileNotFoundError(path) from None
        return _open(other)


def _open_all(store: Store, relpaths: list[str]) -> list[int] | None:
    """Descriptors of every rollout, or None (none left open) when one of them is not there."""
    fds: list[int] = []
    try:
        for relpath in relpaths:
            fds.append(_open_moved(store, relpath))
    except FileNotFoundError:
        for fd in fds:
            os.close(fd)
        return None
    return fds


def _seq_of(line: bytes) -> int | None:
    """The seq a framed line starts with (`{"seq":N,`), read without parsing the line."""
    if not line.startswith(b'{"seq":'):
        return None
    end = line.find(b",", 7, 40)
    try:
        return int(line[7:end]) if end != -1 else None
    except ValueError:
        return None


def records_in(paths: Iterable[Path | int], after: int, through: int,
               types: frozenset[str] | None) -> Iterator[Record]:
    """Records of the given rollouts (oldest first) with after < seq <= through, of `types`."""
    marks = None if types is None else tuple(b'"type":"%s"' % t.encode() for t in types)
    last = after
    for path in paths:
        for line in lines(path):
            seq = _seq_of(line)
            if seq is None or seq <= last:
                continue
            if seq > through:
                return
            if marks is not None and not any(m in line[:96] for m in marks):
                continue
            record = decode(line)
            if record is None or record.get("seq") != seq:
                continue
            if types is None or record.get("type") in types:
                last = seq
                yield record


def thread_log(store: Store, thread_id: str, *, before: Callable[[], None] | None = None
               ) -> LogReader:
    """A LogReader over a thread's chain of rollouts; `before` runs first (a live writer flushes).

    A forked thread's records up to the fork's seq are its parent's: read there.
    """

    def read(after: int, through: int, types: frozenset[str] | None) -> Iterator[Record]:
        if before is not None:
            before()
        rows = store.thread_sessions(thread_id)
        forked = rows[0].forked_from if rows else None
        if isinstance(forked, dict) and isinstance(forked.get("seq"), int) and after < forked["seq"]:
            parent = thread_log(store, str(forked["thread_id"]))
            yield from parent(after, min(through, forked["seq"]), types)
            after = forked["seq"]
        for _ in range(_TRIES):  # opened first: a file moved later is read all the same
            # rollout i holds seqs from its first_seq up to the next one's: skip those before `after`
            keep = [row for i, row in enumerate(rows)
                    if row.first_seq <= through
                    and (i + 1 == len(rows) or rows[i + 1].first_seq > after + 1)]
            fds = _open_all(store, [row.path for row in keep])
            if fds is not None:
                break
            rows = store.thread_sessions(thread_id)  # moved by another process (archived)
        else:
            raise UnknownThread(f"the rollouts of thread {thread_id} keep moving or are gone")
        try:
            yield from records_in(fds, after, through, types)
        finally:
            for fd in fds:
                os.close(fd)

    return read
