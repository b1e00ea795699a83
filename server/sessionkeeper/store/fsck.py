"""fsck: compare the index with every rollout (read in full); with repair, fix what can be fixed.

It also reads back every blob a rollout names as stored: a missing one, or one whose content does
not match its hash, is reported with the sessions naming it (nothing can repair it). In a journal
store it reads the spool files a fold kept for holding damaged or torn lines (`spool.DAMAGED`).
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ThreadBusy
from ..events import blob_refs
from .index import SessionRow
from .layout import fsync_dir, parse_rollout_name
from .locks import rollout_moves_lock, writer_alive
from .quarantine import Quarantined, quarantine_tail
from .reader import read_rollout
from .spool import DAMAGED, read, spool_dir
from .store import Store


@dataclass
class FsckReport:
    """Every divergence between the index and the rollouts, and what was done about it."""

    checked: int = 0
    missing_rows: list[str] = field(default_factory=list)  # rollouts the index did not know
    dangling_rows: list[str] = field(default_factory=list)  # rows whose file is gone
    stale_rows: list[str] = field(default_factory=list)  # size / seq differ (no open writer)
    ahead_rows: list[str] = field(default_factory=list)  # row claims more than the file holds
    duplicate_sessions: list[str] = field(default_factory=list)  # one session id in two files
    damaged: list[dict[str, Any]] = field(default_factory=list)  # middle damage, torn tails
    unindexable: list[dict[str, str]] = field(default_factory=list)
    quarantined: list[Quarantined] = field(default_factory=list)
    blobs_missing: list[dict[str, Any]] = field(default_factory=list)  # {blob, reason, sessions}
    blobs_corrupt: list[dict[str, Any]] = field(default_factory=list)  # hash mismatch, undecodable
    blobs_checked: int = 0
    spools: list[dict[str, Any]] = field(default_factory=list)  # kept for damaged or torn lines
    journals: dict[str, FsckReport] = field(default_factory=dict)  # each agent's journal store
    repaired: bool = False

    @property
    def clean(self) -> bool:
        """True when nothing diverged and nothing is damaged."""
        return not (self.missing_rows or self.dangling_rows or self.stale_rows or self.ahead_rows
                    or self.duplicate_sessions or self.damaged or self.unindexable
                    or self.blobs_missing or self.blobs_corrupt or self.spools
                    or not all(j.clean for j in self.journals.values()))

    @property
    def problems_left(self) -> bool:
        """True when something found is still wrong after what was done: a divergence from the
        index not rebuilt, and what no repair fixes (damage in the middle, a tail not cut off,
        an unindexable file, a duplicate session, a missing or corrupt blob, a damaged spooled
        call), here or in a journal store."""
        diverged = self.missing_rows or self.dangling_rows or self.stale_rows or self.ahead_rows
        return bool((diverged and not self.repaired) or self.duplicate_sessions
                    or self.unindexable or self.blobs_missing or self.blobs_corrupt
                    or any(not d.get("quarantined") for d in self.damaged)
                    or any(not s.get("quarantined") for s in self.spools)
                    or any(j.problems_left for j in self.journals.values()))


def fsck(store: Store, *, repair: bool) -> FsckReport:
    """Compare every rollout (read in full) with the index; with `repair`, fix what can be fixed.

    No rollout moves meanwhile (archive, unarchive wait): one moved mid-walk was missed, or read
    at the place it had left, and its row taken for stale.
    """
    with rollout_moves_lock(store.layout, shared=False, create=not store.read_only):
        return _fsck(store, repair=repair)


def _fsck(store: Store, *, repair: bool) -> FsckReport:
    report = FsckReport()
    rows = {r.session_id: r for r in store.index().sessions()
            if not r.imported}  # agents' own files are checked by their checkpoints
    seen: set[str] = set()
    named: dict[str, set[str]] = {}  # blob -> sessions naming it as stored
    needs_rebuild = False
    for path, archived in store.layout.scan_rollouts():
        report.checked += 1
        row = store.probe(path, archived)
        if isinstance(row, str):
            done = set_aside_empty(store, Path(path)) if repair and row == "empty file" else None
            if done is not None:
                report.quarantined.append(done)
            else:
                report.unindexable.append({"path": path, "reason": row})
            continue
        sid = row.session_id
        if sid in seen:
            report.duplicate_sessions.append(sid)
            continue
        seen.add(sid)
        _check_content(store, Path(path), row, report, repair=repair, named=named)
        known = rows.get(sid)
        kind = _divergence(known, row)
        if kind == "missing" or (kind == "stale" and known is not None and known.size < row.size
                                 and (known.path, known.archived) == (row.path, row.archived)):
            kind = _second_look(store, path, archived, row, kind)
        if kind is None:
            continue
        getattr(report, f"{kind}_rows").append(sid)
        needs_rebuild = True
    report.dangling_rows = sorted(set(rows) - seen)
    _check_blobs(store, named, report)
    _check_spools(store, report, repair=repair)
    if repair and (needs_rebuild or report.dangling_rows):
        store.rebuild()
        report.repaired = True
    return report


def _divergence(known: SessionRow | None, row: SessionRow) -> str | None:
    """How an index row differs from its rollout as probed: missing, ahead, stale, or None."""
    if known is None:
        return "missing"
    if known.size > row.size or known.last_seq > row.last_seq:
        return "ahead"
    if (known.path, known.size, known.archived) != (row.path, row.size, row.archived):
        return "stale"
    return None


def _second_look(store: Store, path: str, archived: bool, row: SessionRow,
                 kind: str) -> str | None:
    """A row missing or behind its file while the thread's writer is open is no divergence (a
    writer writes its row after its lines, and at its snapshots); once the writer has closed
    meanwhile, its last row is in the index: file and row are compared again."""
    if writer_alive(store.layout, row.thread_id):
        return None
    fresh = store.probe(path, archived)
    if not isinstance(fresh, SessionRow):
        return kind
    return _divergence(store.index().session(row.session_id), fresh)


def _in_flight(store: Store, path: Path, row: SessionRow) -> bool:
    """True if a rollout's torn tail is the line its open writer is writing (or has finished
    since): no damage."""
    return writer_alive(store.layout, row.thread_id) or read_rollout(path).tail is None


def set_aside_empty(store: Store, path: Path) -> Quarantined | None:
    """Move a 0-byte rollout (a crash between creating and writing it) into quarantine/; never
    one whose writer has it open (a start in flight: its FileSink holds a flock on it)."""
    name = parse_rollout_name(path.name)
    if name is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held while it moves
        except BlockingIOError:
            return None
        if os.fstat(fd).st_size != 0:
            return None
        target = store.layout.quarantine / f"{path.name}.empty"
        os.replace(path, target)
    finally:
        os.close(fd)
    fsync_dir(target.parent)
    fsync_dir(path.parent)
    (store.layout.pending / name.session_id).unlink(missing_ok=True)
    return Quarantined(name.session_id, str(target), 0, 0, "empty rollout (a crash before its "
                                                           "first line)")


def _check_spools(store: Store, report: FsckReport, *, repair: bool) -> None:
    """Report each spool file a fold kept (`.damaged`); with `repair`, move one holding only torn
    lines (hooks killed mid-write: never acknowledged; its calls are in the journal) into
    quarantine/. One holding a damaged line (a bad checksum: perhaps an acknowledged call) stays,
    and so does the blocked resume it causes: no repair knows what that call was."""
    folder = spool_dir(str(store.layout.root))
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(DAMAGED))
    except FileNotFoundError:
        return
    for name in names:
        path = os.path.join(folder, name)
        lines = read(path)
        entry: dict[str, Any] = {
            "session_id": name.split(".", 1)[0], "path": path,
            "damaged": [{"offset": at, "reason": why} for at, why in lines.damaged],
            "torn": lines.torn, "unfinished": lines.unfinished}
        report.spools.append(entry)
        if repair and not lines.damaged:
            done = _set_aside_spool(store, path, entry["session_id"])
            if done is not None:
                report.quarantined.append(done)
                entry["quarantined"] = True


def _set_aside_spool(store: Store, path: str, session_id: str) -> Quarantined | None:
    """Move a kept spool file into quarantine/ (never over an earlier one); None if it is gone."""
    name = os.path.basename(path)
    for n in range(1000):
        target = store.layout.quarantine / (name if n == 0 else f"{name}.{n}")
        if not target.exists():
            break
    try:
        size = os.stat(path).st_size
        os.link(path, target)  # never over a file of that name: nothing is overwritten
        os.unlink(path)
    except (FileNotFoundError, FileExistsError):  # gone, or the name taken meanwhile: left
        return None
    fsync_dir(target.parent)
    fsync_dir(Path(path).parent)
    return Quarantined(session_id, str(target), 0, size, "spool file holding only torn lines "
                                                         "(hook calls killed while writing)")


def _check_blobs(store: Store, named: dict[str, set[str]], report: FsckReport) -> None:
    check = store.blobs.verify(named)
    report.blobs_checked = check.checked
    for damage in check.damage:
        if damage.key not in named:
            continue  # an unreferenced blob: gc removes it
        entry = {"blob": damage.key, "reason": damage.reason, "sessions": sorted(named[damage.key])}
        (report.blobs_missing if damage.kind == "missing" else report.blobs_corrupt).append(entry)


def _check_content(store: Store, path: Path, row: SessionRow, report: FsckReport, *,
                   repair: bool, named: dict[str, set[str]]) -> None:
    rollout = read_rollout(path)
    for record in rollout.records:
        for key in blob_refs(record):
            named.setdefault(key, set()).add(row.session_id)
    if rollout.damage:
        report.damaged.append({"session_id": row.session_id, "path": str(path),
                               "lines": [d.line for d in rollout.damage],
                               "kinds": sorted({d.kind for d in rollout.damage})})
    if rollout.tail is not None and not _in_flight(store, path, row):
        entry = {"session_id": row.session_id, "path": str(path),
                 "tail_bytes": rollout.tail.length, "reason": rollout.tail.reason}
        report.damaged.append(entry)
        if repair:
            try:
                done = quarantine_tail(store.layout, rollout)
            except ThreadBusy:
                done = None
            if done:
                report.quarantined.append(done)
                entry["quarantined"] = True
