"""Pulling a thread from the shared server into this store: the sessions other machines recorded
(their lines, byte for byte), the blobs those lines name, then their index rows.

Invariants: every line and blob is CRC-checked on the way back, and a blob's content must hash to
its key, or nothing of that session (blob) is written; a rollout file appears or grows only by an
atomic rename of a complete, fsynced file, so a pull cut anywhere leaves the old file or the new
one; a local copy is only ever extended, after checking that its last line is the server's (a
file this store wrote differently is never overwritten). The server's paths are trusted only as
rollout names of the session they claim, inside this store's sessions/ or archived_sessions/.
"""

from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import BlobCorrupt, StoreDamaged
from ..layout import ensure_private_dir, fsync_dir, parse_rollout_name
from .push import lines_of
from .schema import BLOBS, RECORDS

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..index.rows import SessionRow
    from .shared import Shared

_HASH = re.compile(rb'"[a-z_]*hash":"([0-9a-f]{64})"')


@dataclass
class PullReport:
    """What one pull brought."""

    sessions: int = 0  # sessions written or extended here
    records: int = 0  # lines fetched
    blobs: int = 0  # blobs fetched
    problems: list[str] = field(default_factory=list)  # sessions left as they were, and why


def pull_thread(store: Catalog, shared: Shared, thread_id: str) -> PullReport:
    """Bring this store up to date with the server's copy of a thread; returns what came."""
    report = PullReport()
    local = {r.session_id: r for r in store.session_rows(thread_id)}
    rows = []
    named: set[str] = set()
    for row in shared.thread_sessions(thread_id):
        try:
            path = _local_path(store, local.get(row.session_id) or row)
            done = _pull_session(shared, row, path, report, named, root=store.layout.root)
        except StoreDamaged as exc:
            report.problems.append(f"{row.session_id}: {exc}")
            continue
        if done:
            probed = store.probe(str(path), store.layout.archived in path.parents)
            if not isinstance(probed, str):
                rows.append(probed)
    report.blobs = _pull_blobs(store, shared, named, report)
    if rows:
        store.index_upsert(rows)
    return report


def _local_path(store: Catalog, row: SessionRow) -> Path:
    """Where the session's rollout is (or goes) in this store; StoreDamaged for a path that is not
    a rollout of that session inside sessions/ or archived_sessions/."""
    name = parse_rollout_name(os.path.basename(row.path))
    if os.path.isabs(row.path) or name is None or name.session_id != row.session_id:
        raise StoreDamaged(f"the server names {row.path!r}, not a rollout of this session")
    path = store.layout.resolve(row.path)
    if store.layout.sessions not in path.parents and store.layout.archived not in path.parents:
        raise StoreDamaged(f"{row.path!r} lies outside sessions/ and archived_sessions/")
    return path


def _pull_session(shared: Shared, row: SessionRow, path: Path, report: PullReport,
                  named: set[str], *, root: Path) -> bool:
    """Write or extend the local copy of one session; True when it changed."""
    from ..reader import read_bytes

    try:
        data = read_bytes(path)
    except FileNotFoundError:
        data = b""
    prefix = data[:data.rfind(b"\n") + 1]
    have = [(seq, line) for seq, line in lines_of(prefix)]
    last = have[-1][0] if have else None
    if have and last is None:
        raise StoreDamaged("the local copy ends in a line without a seq: left as it is")
    start = -1 if last is None else last
    if row.last_seq <= start:
        return False
    try:
        found = shared.db.execute(f"SELECT seq, line, crc FROM {RECORDS} WHERE session_id = %s "
                                  "AND seq >= %s ORDER BY seq", (row.session_id, start)).fetchall()
    except Exception as exc:
        raise shared.failed("pull", exc) from None
    lines = []
    for seq, line, crc in found:
        line = bytes(line)
        if zlib.crc32(line) != crc:
            raise StoreDamaged(f"line seq {seq} does not match its CRC on the server: not pulled")
        if seq == start and last is not None:
            if line != have[-1][1]:
                raise StoreDamaged(f"the local copy's line seq {seq} differs from the server's: "
                                   "left as it is")
            continue
        lines.append(line)
    if not lines:
        return False
    for line in lines:
        named.update(m.decode() for m in _HASH.findall(line))
    _write_atomically(path, prefix + b"\n".join(lines) + b"\n", within=root)
    report.sessions += 1
    report.records += len(lines)
    return True


def _write_atomically(path: Path, data: bytes, *, within: Path) -> None:
    """Replace `path` with `data`: a private temporary file, fsynced, renamed over it."""
    ensure_private_dir(path.parent, within=within)
    tmp = path.with_name(f".{path.name}.pull-{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def _pull_blobs(store: Catalog, shared: Shared, keys: set[str], report: PullReport) -> int:
    """Fetch the blobs the pulled lines name that this store lacks; returns how many came."""
    import zstandard

    from ..blob_format import content_key

    wanted = sorted(k for k in keys if k not in store.blobs)
    if not wanted:
        return 0
    try:
        found = shared.db.execute(f"SELECT key, data, crc FROM {BLOBS} WHERE key = ANY(%s)",
                                  (wanted,)).fetchall()
    except Exception as exc:
        raise shared.failed("pull blobs", exc) from None
    unpack = zstandard.ZstdDecompressor()
    got = 0
    for key, data, crc in found:
        data = bytes(data)
        try:
            if zlib.crc32(data) != crc:
                raise BlobCorrupt(key, "its bytes on the server do not match their CRC")
            content = unpack.decompress(data)
            if content_key(content) != key:
                raise BlobCorrupt(key, "its content on the server does not match its hash")
            store.blobs.put(content)
        except (BlobCorrupt, zstandard.ZstdError) as exc:
            report.problems.append(f"blob {key}: {exc}")
            continue
        got += 1
    return got
