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
- `put()` holds the blob lock shared and `gc()` exclusively, so a put that found its blob
  present cannot lose it to a running gc. Scanning, verifying and collecting are `blob_upkeep`'s
  (mixin `BlobUpkeep`, whose report types and `BlobInfo` are re-exported here).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import BlobCorrupt, BlobMissing, BlobUnavailable, storage_error
from .blob_format import (
    HEADER_BYTES,
    LEVEL,
    MAX_CONTENT_BYTES,
    RAW,
    WHOLE,
    base_in,
    check_key,
    content_key,
    decode,
    encode,
    is_key,
    parse,
)
from .blob_upkeep import TEMP_SUFFIX, BlobCheck, BlobDamage, BlobInfo, BlobUpkeep, GcReport
from .layout import ensure_private_dir, fsync_dir

__all__ = ["LEVEL", "TEMP_SUFFIX", "BlobCheck", "BlobDamage", "BlobInfo", "BlobStore", "GcReport",
           "check_key", "content_key"]


class BlobStore(BlobUpkeep):
    """Blobs of one store, under `<store root>/blobs`."""

    def __init__(self, store_root: Path | str) -> None:
        self.store_root = Path(store_root)
        self.root = self.store_root / "blobs"
        self._dirs: set[Path] = set()

    # -- writing ------------------------------------------------------------------------------

    def put(self, data: bytes, *, base: str | None = None) -> str:
        """Store `data` durably (a delta against `base`'s content when that pays) and return its key.

        Content already present is verified and kept (re-written whole if it does not read back);
        present as a raw blob (a hook's capture), it is compressed now.
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
            if self._intact(key) and not self._raw(key):
                with contextlib.suppress(FileNotFoundError):
                    os.utime(path, follow_symlinks=False)  # recently used: the cap evicts it last
                return key
            self._write(path, self._encode(data, base if base != key else None))
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
        kind, base, frame = parse(key, raw)
        if kind == RAW:
            content = frame
        else:
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
            if base_kind not in (WHOLE, RAW):
                raise BlobCorrupt(base, "it is itself a delta")
            content = frame if base_kind == RAW else decode(base, frame, None)
        except BlobCorrupt as exc:
            raise BlobCorrupt(key, f"its base {base} is corrupt: {exc.reason}") from None
        if content_key(content) != base:
            raise BlobCorrupt(key, f"its base {base} does not match its hash")
        return content

    def _raw(self, key: str) -> bool:
        """True when the blob file of `key` holds its content uncompressed (a hook's capture)."""
        try:
            with open(self._path(key), "rb") as handle:
                return handle.read(5)[4:5] == RAW
        except OSError:
            return False

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

