"""Opening `state.db`: private, in WAL mode, never through a symlink; sqlite errors typed.

A writing connection waits at most BUSY_S for another process's lock; a busy lock becomes
IndexBusy (try again later), a full disk IndexFull (an IndexBusy: nothing wrong with the index),
any other sqlite failure IndexUnavailable.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
from pathlib import Path

from ...errors import IndexBusy, IndexFull, IndexUnavailable

BUSY_S = 0.25  # a foreign writer holding the lock never stalls a start: the update waits for later


def unavailable(what: str, exc: Exception) -> IndexUnavailable:
    """The typed error for a sqlite failure: busy (someone else writes), full (the disk) or
    unusable."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return IndexBusy(f"{what}: {text}")
    if "disk is full" in text or (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)):
        return IndexFull(f"{what}: {text}")
    return IndexUnavailable(f"{what}: {text}")


def refuse_symlinks(path: Path) -> None:
    """IndexUnavailable when state.db or its -wal/-shm file is a symlink."""
    for part in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISLNK(part.lstat().st_mode):
                raise IndexUnavailable(f"{part} is a symlink; an index is never followed elsewhere")


def connect(path: Path, *, fast: bool = False) -> sqlite3.Connection:
    """A connection that may write (created 0600 when missing; `fast`: no journal, no fsync, for a
    temporary index built before its rename)."""
    refuse_symlinks(path)
    if not path.exists():  # create it private; never open+close a live database (POSIX locks)
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                             | os.O_CLOEXEC, 0o600))
    db = sqlite3.connect(path, timeout=BUSY_S, isolation_level="DEFERRED", check_same_thread=False)
    db.row_factory = sqlite3.Row
    db.execute(f"PRAGMA journal_mode={'OFF' if fast else 'WAL'}")
    db.execute(f"PRAGMA synchronous={'OFF' if fast else 'NORMAL'}")
    db.execute(f"PRAGMA busy_timeout={int(BUSY_S * 1000)}")
    return db


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write (nor create -shm/-wal when there is no live writer)."""
    refuse_symlinks(path)
    immutable = "" if Path(f"{path}-wal").exists() else "&immutable=1"
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro{immutable}", uri=True, timeout=0.25,
                         check_same_thread=False)
    db.row_factory = sqlite3.Row
    return db
