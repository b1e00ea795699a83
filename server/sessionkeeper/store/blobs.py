"""The content-addressed blob store: `<store>/blobs/ab/cdef…`, one file per distinct content.

Invariants:
- a blob's key is the sha256 hex of its raw content; `get()` returns bytes that hash to the key
  or raises `BlobMissing` / `BlobCorrupt` — never other content;
- `put()` returns only after the blob file and its directory entry are fsynced (temp file in
  the same directory, fsync, rename, fsync of the directory): a record naming the blob may be
  acknowledged as soon as `put()` has returned;
- files are 0600 and directories 0700 whatever the umask; a symlink is never followed;
- a blob is stored whole or as a delta against a whole blob (`blob_format`: one link, never a
  chain); a put names the previous version as `base` and the store decides what pays;
- `gc()` never removes a protected blob, a blob younger than `min_age_s` (a put whose record
  is not written yet), or the base of a blob it keeps; `put()` holds a shared lock and `gc()`
  an exclusive one, so a put that found its blob present cannot lose it to a running gc.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import BlobCorrupt, BlobMissing, BlobUnavailable, storage_error
from .blob_format import (
    HEADER_BYTES,
    LEVEL,
    MAX_CONTENT_BYTES,
    WHOLE,
    base_in,
    check_key,
    content_key,
    decode,
    encode,
    is_key,
    parse,
)
from .layout import ensure_private_dir, fsync_dir

__all__ = ["LEVEL", "BlobCheck", "BlobDamage", "BlobInfo", "BlobStore", "GcReport", "check_key",
           "content_key"]

TEMP_SUFFIX = ".blob-tmp"

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


class BlobStore:
    """Blobs of one store, under `<store root>/blobs`."""

    def __init__(self, store_root: Path | str) -> None:
        self.store_root = Path(store_root)
        self.root = self.store_root / "blobs"
        self._dirs: set[Path] = set()

    # -- writing ------------------------------------------------------------------------------

    def put(self, data: bytes, *, base: str | None = None) -> str:
        """Store `data` durably (a delta against `base`'s content when that pays) and return its key.

        Content already present is verified and kept (re-written whole if it does not read back).
        """
        if not isinstance(data, bytes):
            raise TypeError("blob content must be bytes")
        if len(data) > MAX_CONTENT_BYTES:
            raise ValueError(f"blob content over {MAX_CONTENT_BYTES} bytes")
        key = content_key(data)
        if base is not None:
            check_key(base)
        if self._ensure(self.root):
            fsync_dir(self.store_root)
        with self._lock(shared=True):
            path = self._path(key)
            if self._intact(key):
                with contextlib.suppress(FileNotFoundError):
                    os.utime(path, follow_symlinks=False)  # recently used: the cap evicts it last
                return key
            self._write(path, self._encode(data, base))
        return key

    def _encode(self, data: bytes, base: str | None) -> bytes:
        """The blob file's bytes: a delta against `base`'s whole blob when that pays, else whole."""
        return encode(data, self._whole_base(base) if base is not None else None)

    def _whole_base(self, base: str) -> tuple[str, bytes, int] | None:
        """(key, content, stored size) of the whole blob a delta against `base` would use."""
        info = self.info(base)
        if info is not None and info.base is not None:
            info = self.info(info.base)
        if info is None:
            return None
        try:
            content = self.get(info.key)
        except BlobUnavailable:
            return None
        return info.key, content, info.stored_bytes

    def _write(self, path: Path, payload: bytes) -> None:
        """Write a blob file atomically and durably: temp, fsync, rename, fsync of the directory."""
        created = self._ensure(path.parent)
        try:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=TEMP_SUFFIX)
            try:
                os.fchmod(fd, 0o600)
                with os.fdopen(fd, "wb") as handle:
                    handle.write(payload)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
                raise
            fsync_dir(path.parent)
            if created:
                fsync_dir(self.root)
        except OSError as exc:
            raise storage_error(exc, f"a blob could not be written in {self.root}") from exc

    def _ensure(self, directory: Path) -> bool:
        """Create a private directory of the store once; True if this call created it."""
        if directory in self._dirs:
            return False
        existed = directory.is_dir()
        if directory == self.root:
            ensure_private_dir(self.store_root)
        ensure_private_dir(directory, within=self.store_root)
        self._dirs.add(directory)
        return not existed

    @contextlib.contextmanager
    def _lock(self, *, shared: bool) -> Iterator[None]:
        """Hold the store's blob lock (flock on `blobs/.lock`), shared for put, exclusive for gc."""
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self.root / ".lock", flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    # -- reading ------------------------------------------------------------------------------

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / key[2:]

    def __contains__(self, key: object) -> bool:
        """True if a blob file for `key` exists (without reading it)."""
        return is_key(key) and self.info(key) is not None

    def info(self, key: str) -> BlobInfo | None:
        """Return what the blob file of `key` says about itself (size, base), or None if absent."""
        path = self._path(check_key(key))
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return None
            raise
        try:
            st = os.fstat(fd)
            head = os.read(fd, HEADER_BYTES)
        finally:
            os.close(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        return BlobInfo(key, st.st_size, base_in(head), st.st_mtime)

    def _read(self, key: str, *, of: str | None = None) -> bytes:
        """The raw bytes of a blob file (`of`: the blob whose base this is, for the error)."""
        owner, what = (of, f"its base {key}") if of else (key, "the blob")
        try:
            fd = os.open(self._path(key), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            raise BlobMissing(owner, f"{what} is not in the store") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise BlobCorrupt(owner, f"{what} is a symlink (never followed)") from None
            raise
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise BlobCorrupt(owner, f"{what} is not a regular file")
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def get(self, key: str) -> bytes:
        """Return the content stored under `key`, verified against it (BlobMissing / BlobCorrupt)."""
        raw = self._read(check_key(key))
        _kind, base, frame = parse(key, raw)
        dictionary = self._base_content(key, base) if base is not None else None
        content = decode(key, frame, dictionary)
        if content_key(content) != key:
            raise BlobCorrupt(key, "the content does not match its hash")
        return content

    def _base_content(self, key: str, base: str) -> bytes:
        """The verified content of the whole blob `key` is a delta against."""
        raw = self._read(base, of=key)
        try:
            base_kind, _, frame = parse(base, raw)
            if base_kind != WHOLE:
                raise BlobCorrupt(base, "it is itself a delta")
            content = decode(base, frame, None)
        except BlobCorrupt as exc:
            raise BlobCorrupt(key, f"its base {base} is corrupt: {exc.reason}") from None
        if content_key(content) != base:
            raise BlobCorrupt(key, f"its base {base} does not match its hash")
        return content

    def _intact(self, key: str) -> bool:
        try:
            self.get(key)
        except BlobUnavailable:
            return False
        return True

    def unreadable(self, keys: Iterable[str]) -> dict[str, str]:
        """Return {key: reason} for each of `keys` whose content cannot be read back right now."""
        out: dict[str, str] = {}
        for key in dict.fromkeys(keys):
            try:
                self.get(key)
            except BlobUnavailable as exc:
                out[key] = f"{exc.name}: {exc.reason}"
        return out

    # -- checking and collecting ----------------------------------------------------------------

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
