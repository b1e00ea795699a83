"""Repairs that change files: quarantine a torn tail; fsck the index against the rollouts."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StoreDamaged, ThreadBusy
from .layout import fsync_dir, parse_rollout_name
from .probe import probe
from .reader import Rollout, read_rollout


@dataclass(frozen=True)
class Quarantined:
    """A torn tail cut off a rollout and kept aside."""

    session_id: str
    path: str  # where the bytes now live
    offset: int
    bytes: int
    reason: str


def quarantine_tail(store: Any, rollout: Rollout, *, locked: bool = False) -> Quarantined | None:
    """Move a rollout's torn tail into quarantine/ and cut the file back to its complete prefix.

    Needs the thread's writer lock (taken here unless the caller holds it: `locked`); while
    another writer holds it this raises ThreadBusy, since its last line may be in flight.
    """
    if rollout.tail is None or rollout.path is None or rollout.meta is None:
        return None
    name = parse_rollout_name(rollout.path.name)
    session = name.session_id if name else "unknown"
    lock = None if locked else store.lock_thread(rollout.meta["thread_id"], purpose="cut its tail")
    try:
        path = store.layout.contained(rollout.path)
        tail = read_rollout(path).tail  # as the file is now, under the lock: not a stale read
        if tail is None:
            return None
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            data = os.pread(fd, os.fstat(fd).st_size - tail.offset, tail.offset)
            target, qfd = _new_quarantine_file(store.layout.quarantine, f"{session}.{tail.offset}")
            try:
                os.write(qfd, data)
                os.fsync(qfd)
            finally:
                os.close(qfd)
            fsync_dir(target.parent)
            os.ftruncate(fd, tail.offset)
            os.fsync(fd)
        finally:
            os.close(fd)
    finally:
        if lock is not None:
            lock.release()
    return Quarantined(session, str(target), tail.offset, len(data), tail.reason)


def _new_quarantine_file(folder: Path, stem: str) -> tuple[Path, int]:
    """A fresh quarantine file (never overwriting an earlier one): its path and open descriptor."""
    for n in range(1000):
        target = folder / (f"{stem}.torn" if n == 0 else f"{stem}.{n}.torn")
        try:
            return target, os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                   0o600)
        except FileExistsError:
            continue
    raise StoreDamaged(f"too many quarantined tails named {stem} in {folder}")


@dataclass
class FsckReport:
    """Every divergence between the index and the rollouts, and what was done about it."""

    checked: int = 0
    missing_rows: list[str] = field(default_factory=list)  # rollouts the index did not know
    dangling_rows: list[str] = field(default_factory=list)  # rows whose file is gone
    stale_rows: list[str] = field(default_factory=list)  # size / seq differ from the file
    ahead_rows: list[str] = field(default_factory=list)  # row claims more than the file holds
    duplicate_sessions: list[str] = field(default_factory=list)  # one session id in two files
    damaged: list[dict[str, Any]] = field(default_factory=list)  # middle damage, torn tails
    unindexable: list[dict[str, str]] = field(default_factory=list)
    quarantined: list[Quarantined] = field(default_factory=list)
    repaired: bool = False

    @property
    def clean(self) -> bool:
        """True when nothing diverged and nothing is damaged."""
        return not (self.missing_rows or self.dangling_rows or self.stale_rows or self.ahead_rows
                    or self.duplicate_sessions or self.damaged or self.unindexable)


def fsck(store: Any, *, repair: bool) -> FsckReport:
    """Compare every rollout (read in full) with the index; with `repair`, fix what can be fixed."""
    report = FsckReport()
    rows = {r["session_id"]: r for r in store.index().sessions()}
    seen: dict[str, str] = {}
    fixes: list[dict[str, Any]] = []
    for name, archived in store.layout.scan_rollouts():
        path = Path(name)
        report.checked += 1
        row = probe(path, archived=archived)
        if isinstance(row, str):
            report.unindexable.append({"path": str(path), "reason": row})
            continue
        sid = row["session_id"]
        if sid in seen:
            report.duplicate_sessions.append(sid)
            continue
        seen[sid] = str(path)
        _check_content(store, path, row, report, repair=repair)
        known = rows.get(sid)
        if known is None:
            report.missing_rows.append(sid)
            fixes.append(row)
        elif known["size"] > row["size"] or known["last_seq"] > row["last_seq"]:
            report.ahead_rows.append(sid)
            fixes.append(row)
        elif (known["path"], known["size"], known["archived"]) != (
                row["path"], row["size"], row["archived"]):
            report.stale_rows.append(sid)
            fixes.append(row)
    report.dangling_rows = sorted(set(rows) - set(seen))
    if repair and (fixes or report.dangling_rows):
        store.rebuild()
        report.repaired = True
    return report


def _check_content(store: Any, path: Path, row: dict[str, Any], report: FsckReport, *,
                   repair: bool) -> None:
    rollout = read_rollout(path)
    if rollout.damage:
        report.damaged.append({"session_id": row["session_id"], "path": str(path),
                               "lines": [d.line for d in rollout.damage],
                               "kinds": sorted({d.kind for d in rollout.damage})})
        row["status"] = "damaged"
    if rollout.tail is not None:
        report.damaged.append({"session_id": row["session_id"], "path": str(path),
                               "tail_bytes": rollout.tail.length, "reason": rollout.tail.reason})
        if repair:
            try:
                done = quarantine_tail(store, rollout)
            except ThreadBusy:
                done = None
            if done:
                report.quarantined.append(done)
                row["size"] = rollout.tail.offset
