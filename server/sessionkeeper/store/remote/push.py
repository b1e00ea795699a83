"""Pushing a store to the shared server: its rollouts' lines, its blobs, then its index rows.

Invariants: a session's lines go in one transaction (all of them or none), keyed by (session, seq),
after the seq the server already holds — so a push cut anywhere (kill -9, the server stopped)
duplicates nothing and loses nothing: the next one starts where the server stands. A session's
row is shared only once the server holds its lines up to the row's last seq (a row never promises
more than another machine can pull). Lines are pushed as written, byte for byte, with their CRC-32;
a line without a readable seq (damage) ends what is pushed of that session, and says so.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import IndexUnavailable, StoreDamaged
from .schema import BLOBS, RECORDS

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..index.rows import SessionRow
    from .shared import Shared

_ROWS_AT_ONCE = 500


@dataclass
class PushReport:
    """What one push sent."""

    sessions: int = 0  # sessions whose lines (or row) changed on the server
    records: int = 0  # lines sent
    blobs: int = 0  # blobs sent
    unchanged: int = 0  # sessions the server already held as they are
    problems: list[str] = field(default_factory=list)  # sessions pushed in part, and why


def seq_of(line: bytes) -> int | None:
    """The seq a rollout line starts with (`{"seq":N,`), None when it does not."""
    if not line.startswith(b'{"seq":'):
        return None
    end = line.find(b",", 7)
    digits = line[7:end] if end > 0 else b""
    return int(digits) if digits.isdigit() else None


def lines_of(data: bytes) -> Iterator[tuple[int | None, bytes]]:
    """(seq, line) of every complete line of a rollout's bytes (a torn last line is left out)."""
    end = data.rfind(b"\n")
    if end < 0:
        return
    for line in data[:end].split(b"\n"):
        yield seq_of(line), line


def lines_after(path: Path, after: int) -> tuple[list[tuple[int, bytes]], str | None]:
    """The lines of the rollout at `path` whose seq is past `after`, in order, and why it stops
    early (a line without a seq, or one out of order), if it does."""
    from ..reader import read_bytes

    found: list[tuple[int, bytes]] = []
    last = -1
    for number, (seq, line) in enumerate(lines_of(read_bytes(path)), start=1):
        if seq is None or seq <= last:
            return found, f"line {number} has no seq after {last}: pushed up to it"
        last = seq
        if seq > after:
            found.append((seq, line))
    return found, None


def push(store: Catalog, shared: Shared, *, thread_id: str | None = None) -> PushReport:
    """Push the store's own sessions (of one thread) and its blobs; returns what was sent."""
    report = PushReport()
    local = [r for r in store.session_rows(thread_id) if not r.imported]
    part = shared.partition()
    remote = {r.session_id: r for r in part.sessions(thread_id)}
    changed = [r for r in local if remote.get(r.session_id) != r]
    report.unchanged = len(local) - len(changed)
    held = _held(shared, [r.session_id for r in changed])
    ready: list[SessionRow] = []
    for row in changed:
        reached = _push_session(store, shared, row, held.get(row.session_id, -1), report)
        if reached >= row.last_seq:
            ready.append(row)
        report.sessions += 1
    for start in range(0, len(ready), _ROWS_AT_ONCE):
        part.upsert(ready[start:start + _ROWS_AT_ONCE])
    report.blobs = _push_blobs(store, shared)
    return report


def _held(shared: Shared, sessions: list[str]) -> dict[str, int]:
    """The last seq the server holds of each session (absent: none)."""
    if not sessions:
        return {}
    try:
        rows = shared.db.execute(f"SELECT session_id, max(seq) FROM {RECORDS} WHERE session_id = "
                                 "ANY(%s) GROUP BY session_id", (sessions,)).fetchall()
    except Exception as exc:
        raise shared.failed("push", exc) from None
    return {session: int(seq) for session, seq in rows}


def _push_session(store: Catalog, shared: Shared, row: SessionRow, held: int,
                  report: PushReport) -> int:
    """Send a session's lines past `held`, in one transaction; returns the last seq the server
    holds after it (a concurrent pusher's lines are taken as they are)."""
    import psycopg

    try:
        lines, why = lines_after(store.layout.resolve(row.path), held)
    except (OSError, StoreDamaged) as exc:
        report.problems.append(f"{row.session_id}: unreadable ({exc})")
        return held
    if why:
        report.problems.append(f"{row.session_id}: {why}")
    if not lines:
        return held
    for _attempt in range(2):
        try:
            with shared.db.transaction(), shared.db.cursor() as cur, cur.copy(
                    f"COPY {RECORDS}(session_id, seq, thread_id, line, crc) FROM STDIN") as copy:
                for seq, line in lines:
                    copy.write_row((row.session_id, seq, row.thread_id, line, zlib.crc32(line)))
        except psycopg.errors.UniqueViolation:  # another push of this store got there first
            held = _held(shared, [row.session_id]).get(row.session_id, -1)
            lines = [(s, line) for s, line in lines if s > held]
            if not lines:
                return held
            continue
        except Exception as exc:
            raise shared.failed("push", exc) from None
        report.records += len(lines)
        return lines[-1][0]
    raise IndexUnavailable(f"session {row.session_id}: pushed by another process meanwhile; "
                           "sync again")


def _push_blobs(store: Catalog, shared: Shared) -> int:
    """Send the blobs the server lacks (content checked against its key first, zstd-compressed)."""
    import zstandard

    from ...errors import BlobUnavailable

    blobs = store.blobs
    if not blobs.root.is_dir():
        return 0
    keys = sorted({info.key for info in blobs.scan()[0]})
    if not keys:
        return 0
    try:
        there = {k for (k,) in shared.db.execute(f"SELECT key FROM {BLOBS} WHERE key = ANY(%s)",
                                                 (keys,)).fetchall()}
    except Exception as exc:
        raise shared.failed("push blobs", exc) from None
    sent = 0
    packer = zstandard.ZstdCompressor(level=3)
    for key in keys:
        if key in there:
            continue
        try:
            content = blobs.get(key)
        except BlobUnavailable:
            continue  # missing or corrupt here: never sent (fsck reports it)
        data = packer.compress(content)
        try:
            with shared.db.transaction():
                shared.db.execute(f"INSERT INTO {BLOBS}(key, data, size, crc) VALUES(%s, %s, %s, "
                                  "%s) ON CONFLICT(key) DO NOTHING",
                                  (key, data, len(content), zlib.crc32(data)))
        except Exception as exc:
            raise shared.failed("push blobs", exc) from None
        sent += 1
    return sent
