"""The blob store's upkeep: find every blob file, verify them, and collect the ones not needed.

Invariants: `gc()` never removes a protected blob, a blob younger than `min_age_s` (a put whose
record is not written yet), or the base of a blob it keeps; over a cap it evicts the least
recently used unprotected blobs, a whole blob with every delta on it. It holds the store's blob
lock exclusively (`put()` holds it shared), so a put that found its blob present cannot lose it
to a running gc. Temp files a crashed put left are removed once older than `min_age_s`.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..errors import BlobMissing, BlobUnavailable
from .blob_format import is_key

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

TEMP_SUFFIX = ".blob-tmp"
"""The name ending of a blob's temp file (written, fsynced, then renamed to its key)."""

_FAN = re.compile(r"[0-9a-f]{2}")
_REST = re.compile(r"[0-9a-f]{62}")


@dataclass(frozen=True)
class BlobInfo:
    """One blob file as found on disk: its stored size, its base (deltas) and its mtime."""

    key: str
    stored_bytes: int
    base: str | None
    mtime: float


@dataclass(frozen=True)
class BlobDamage:
    """A blob that cannot be read: absent (`missing`) or not decoding to its key (`corrupt`)."""

    key: str
    kind: Literal["missing", "corrupt"]
    reason: str


@dataclass(frozen=True)
class BlobCheck:
    """What `verify()` found: how many blob files it read, and every damaged or missing one."""

    checked: int
    damage: tuple[BlobDamage, ...]

    @property
    def ok(self) -> bool:
        """True when nothing is missing or corrupt."""
        return not self.damage

    @property
    def missing(self) -> tuple[str, ...]:
        """Keys that cannot be found (or whose base cannot)."""
        return tuple(d.key for d in self.damage if d.kind == "missing")

    @property
    def corrupt(self) -> tuple[str, ...]:
        """Keys whose bytes do not decode to their hash."""
        return tuple(d.key for d in self.damage if d.kind == "corrupt")


@dataclass(frozen=True)
class GcReport:
    """What `gc()` removed: unreferenced blobs, referenced ones expired for the cap, temp files."""

    removed: tuple[str, ...]
    expired: tuple[str, ...]
    temps_removed: int
    freed_bytes: int
    stored_bytes: int
    over_cap: bool


class BlobUpkeep:
    """Mixin of `BlobStore`: scan, verify and gc its files."""

    root: Path

    if TYPE_CHECKING:  # provided by BlobStore
        def info(self, key: str) -> BlobInfo | None: ...

        def get(self, key: str) -> bytes: ...

        def _path(self, key: str) -> Path: ...

        def _lock(self, *, shared: bool) -> AbstractContextManager[None]: ...

    def scan(self) -> tuple[list[BlobInfo], list[Path]]:
        """Every blob file on disk, and every temp file a crashed put left behind."""
        blobs: list[BlobInfo] = []
        temps: list[Path] = []
        if not self.root.is_dir():
            return blobs, temps
        for fan in os.scandir(self.root):
            if not (_FAN.fullmatch(fan.name) and fan.is_dir(follow_symlinks=False)):
                continue
            for entry in os.scandir(fan.path):
                if entry.name.endswith(TEMP_SUFFIX):
                    temps.append(Path(entry.path))
                elif _REST.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                    info = self.info(fan.name + entry.name)
                    if info is not None:
                        blobs.append(info)
        return blobs, temps

    def verify(self, referenced: Iterable[str] = ()) -> BlobCheck:
        """Read back every blob on disk; report each corrupt one and each referenced one missing."""
        blobs, _ = self.scan()
        present = {b.key for b in blobs}
        damage: list[BlobDamage] = []
        for info in sorted(blobs, key=lambda b: b.key):
            try:
                self.get(info.key)
            except BlobUnavailable as exc:
                kind: Literal["missing", "corrupt"] = "missing" if isinstance(exc, BlobMissing) else "corrupt"
                damage.append(BlobDamage(info.key, kind, exc.reason))
        wanted = {k for k in referenced if is_key(k)}
        damage += [BlobDamage(k, "missing", "the blob is not in the store")
                   for k in sorted(wanted - present)]
        return BlobCheck(len(blobs), tuple(damage))

    def gc(self, referenced: Iterable[str], *, cap_bytes: int | None = None,
           protect: Iterable[str] = (), min_age_s: float = 3600.0, dry_run: bool = False) -> GcReport:
        """Remove unreferenced blobs, then (over `cap_bytes`) the least recently used unprotected ones.

        Never removes a key in `protect`, a blob younger than `min_age_s`, or a base of a kept blob.
        `dry_run`: report what would be removed, remove nothing.
        """
        wanted = {k for k in referenced if is_key(k)}  # a bad key names no blob
        guarded = {k for k in protect if is_key(k)}
        if not self.root.is_dir():
            return GcReport((), (), 0, 0, 0, False)
        with self._lock(shared=False):
            blobs, temps = self.scan()
            by_key = {b.key: b for b in blobs}
            now = time.time()
            young = {k for k, b in by_key.items() if now - b.mtime < min_age_s}
            pinned = _with_bases(guarded | young, by_key)
            kept = _with_bases(wanted, by_key) | pinned
            removed = sorted(set(by_key) - kept)
            expired = _over_cap(kept, pinned, by_key, cap_bytes)
            stale = [t for t in temps if _older(t, now, min_age_s)]
            for key in [] if dry_run else removed + expired:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._path(key))
            for tmp in [] if dry_run else stale:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
        left = sum(by_key[k].stored_bytes for k in (kept & by_key.keys()) - set(expired))
        return GcReport(tuple(removed), tuple(expired), len(stale),
                        sum(by_key[k].stored_bytes for k in removed + expired), left,
                        cap_bytes is not None and left > cap_bytes)


def _with_bases(keys: set[str], by_key: dict[str, BlobInfo]) -> set[str]:
    """`keys` plus the base of each that is a delta on disk."""
    return keys | {b for k in keys if k in by_key and (b := by_key[k].base) is not None}


def _over_cap(kept: set[str], pinned: set[str], by_key: dict[str, BlobInfo],
              cap_bytes: int | None) -> list[str]:
    """The kept blobs to evict, least recently used first, until the rest fits `cap_bytes`.

    A whole blob counts as used when any delta on it was; evicting it evicts those deltas.
    """
    present = [k for k in kept if k in by_key]
    total = sum(by_key[k].stored_bytes for k in present)
    if cap_bytes is None or total <= cap_bytes:
        return []
    dependents: dict[str, list[str]] = {}
    for key in present:
        if (base := by_key[key].base) is not None:
            dependents.setdefault(base, []).append(key)
    used = {k: max([by_key[k].mtime] + [by_key[d].mtime for d in dependents.get(k, [])])
            for k in present}
    gone: set[str] = set()
    out: list[str] = []
    for key in sorted((k for k in present if k not in pinned), key=lambda k: (used[k], k)):
        if total <= cap_bytes:
            break
        for victim in [key, *dependents.get(key, [])]:
            if victim not in gone:
                gone.add(victim)
                out.append(victim)
                total -= by_key[victim].stored_bytes
    return out


def _older(path: Path, now: float, age_s: float) -> bool:
    try:
        return now - path.lstat().st_mtime >= age_s
    except FileNotFoundError:
        return False
