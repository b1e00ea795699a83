"""A tool hook's capture of a file's content into a store's blobs, without loading zstd.

The content is written as a raw blob (`blob_format`'s kind `R`) in the blob store's own layout and
under its lock, so `BlobStore.get` reads it like any blob and gc never races it; the next `put` of
the same content (the journal's fold) compresses it. Invariants: as `BlobStore.put` — the file is
fsynced and renamed into place, its directory fsynced, before `stash` returns (a record naming it
may then be acknowledged); 0600 files in 0700 directories; a symlink is never followed; content
already held by any blob is not written again. Standard library only: this runs in a tool hook.
"""

from __future__ import annotations

import fcntl
import os

_MAGIC_RAW = b"SKB\x01R"  # blob_format.MAGIC + blob_format.RAW
_TEMP_SUFFIX = ".blob-tmp"  # blob_upkeep.TEMP_SUFFIX: a dead temp file is cleaned like any
_OPEN = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW


def _mkdir(path: str) -> bool:
    """Create a private directory; True when this call created it."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        return False
    return True


def _discard(path: str) -> None:
    """Remove a temp file that may not exist."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def stash(store_root: str, key: str, data: bytes) -> None:
    """Keep `data` (whose sha256 hex is `key`) in the blobs of the store at `store_root`, durably."""
    root = os.path.join(store_root, "blobs")
    directory = os.path.join(root, key[:2])
    path = os.path.join(directory, key[2:])
    if os.path.isfile(path):
        return
    made_root = _mkdir(root)
    if made_root:
        _fsync_dir(store_root)
    lock = os.open(os.path.join(root, ".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                   0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_SH)  # gc holds it exclusively
        made = _mkdir(directory)
        if made:
            _fsync_dir(root)
        elif os.path.isfile(path):
            return
        tmp = os.path.join(directory, f".{key[2:18]}.{os.getpid()}{_TEMP_SUFFIX}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            try:
                view = memoryview(_MAGIC_RAW + data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except BaseException:
            _discard(tmp)
            raise
        _fsync_dir(directory)
    finally:
        os.close(lock)
