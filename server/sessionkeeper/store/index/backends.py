"""Where the SQLite index lives: opening `state.db`, building a missing or set-aside one anew (in
a temporary file, fsynced and renamed into place), setting an unusable one aside; and the
read-only backend, whose updates stay in memory.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

from ...errors import IndexUnavailable
from .connection import connect, unavailable
from .memory import MemoryIndex
from .overlay import OverlayIndex
from .rows import SessionRow
from .sql import INDEX_VERSION, SCHEMA
from .sqlite import SqliteIndex, fill_rows, rewrite_cache


class SqliteBackend:
    """state.db at `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def open(self) -> SqliteIndex:
        """Open the existing index; IndexUnavailable when missing, a symlink, or unusable."""
        return SqliteIndex(_existing(self.path))

    def set_aside(self) -> None:
        """Move state.db (with its -wal/-shm) out of the way, keeping it for inspection."""
        stamp = int(time.time())
        for suffix in ("", "-wal", "-shm"):
            part = Path(f"{self.path}{suffix}")
            with contextlib.suppress(FileNotFoundError):  # gone meanwhile: nothing to move
                os.replace(part, part.with_name(f"{self.path.name}.corrupt-{stamp}{suffix}"))

    def build(self, rows: Sequence[SessionRow]) -> SqliteIndex:
        """Write a complete index to a temporary file, fsync it and rename it into place."""
        path = self.path
        tmp = path.with_name(f".{path.name}.rebuild-{os.getpid()}")
        _remove_dead_builds(path)
        for stale in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            stale.unlink(missing_ok=True)
        try:
            db = connect(tmp, fast=True)
            try:
                db.executescript(SCHEMA)
                db.execute("INSERT INTO meta VALUES('version', ?)", (str(INDEX_VERSION),))
                with rewrite_cache(db):
                    fill_rows(db, rows, only=True)
                db.commit()
            finally:
                db.close()
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            for side in (Path(f"{path}-wal"), Path(f"{path}-shm")):
                side.unlink(missing_ok=True)
            os.replace(tmp, path)
        except BaseException as exc:  # Ctrl-C too: the temporary index never stays behind
            tmp.unlink(missing_ok=True)
            if isinstance(exc, (sqlite3.Error, OSError)):
                raise unavailable("index rebuild failed", exc) from exc
            raise
        return SqliteIndex(path)


def _existing(path: Path) -> Path:
    """`path`, or IndexUnavailable when nothing is there (a symlink is there: `connection`
    refuses it)."""
    if not path.exists() and not path.is_symlink():
        raise IndexUnavailable("index missing")
    return path


def _remove_dead_builds(path: Path) -> None:
    """Remove the temporary indexes of builds whose process is gone (killed while building)."""
    for stale in path.parent.glob(f".{path.name}.rebuild-*"):
        pid = stale.name.rsplit("-", 1)[-1]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            for part in (stale, Path(f"{stale}-wal"), Path(f"{stale}-shm")):
                part.unlink(missing_ok=True)
        except OSError:  # alive (another user's: never ours to remove)
            continue


class ReadOnlyBackend:
    """state.db read but never written: updates stay in memory, a bad index is rebuilt in memory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def open(self) -> OverlayIndex:
        """The existing index behind a memory overlay; IndexUnavailable when missing or unusable."""
        return OverlayIndex(SqliteIndex(_existing(self.path), read_only=True))

    def set_aside(self) -> None:
        """Nothing moves: the store is not ours to change."""

    def build(self, rows: Sequence[SessionRow]) -> OverlayIndex:
        """An index held in memory only."""
        index = OverlayIndex(MemoryIndex())
        index.replace_all(rows)
        return index
