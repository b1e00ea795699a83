"""Where things live in a store: rollouts, archive, quarantine, locks, index; private permissions."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .. import ids
from ..errors import StoreDamaged, StoreIOError
from . import home
from .home import ENV_HOME
from .private import ensure_private_dir

__all__ = ["ENV_HOME", "ROLLOUT_NAME", "Layout", "RolloutName", "default_root", "ensure_private_dir",
           "fsync_dir", "parse_rollout_name"]

if TYPE_CHECKING:  # a datetime arrives only with a new rollout
    from datetime import datetime

ROLLOUT_NAME = re.compile(
    r"rollout-(\d{8}T\d{6}(?:\d{3})?Z)-"
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl"
)


def default_root() -> Path:
    """Return the store root: $SESSIONKEEPER_HOME, else the per-user data directory (`home`)."""
    return Path(home.default_root())


def fsync_dir(path: Path) -> None:
    """fsync a directory so a file created or renamed in it survives power loss."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as exc:  # EIO: the entry may not survive; a typed error, never a bare OSError
        raise StoreIOError(f"fsync of directory {path} failed: {exc}") from exc
    finally:
        os.close(fd)


class RolloutName(NamedTuple):  # not a dataclass: ~5x cheaper to create at import (issue 13)
    """What a rollout's file name says: when it started and which session it holds."""

    started: str
    session_id: str


def parse_rollout_name(name: str) -> RolloutName | None:
    """Parse `rollout-<ts>-<session_id>.jsonl`; None for any other name."""
    match = ROLLOUT_NAME.fullmatch(name)
    return RolloutName(match.group(1), match.group(2)) if match else None


class Layout:
    """Paths inside one store root. Every id is validated before it becomes part of a path."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root).expanduser().resolve() if root else default_root().resolve()

    @property
    def sessions(self) -> Path:
        """Live rollouts, by day."""
        return self.root / "sessions"

    @property
    def archived(self) -> Path:
        """Rollouts of archived threads."""
        return self.root / "archived_sessions"

    @property
    def quarantine(self) -> Path:
        """Torn tails cut off rollouts, kept for inspection."""
        return self.root / "quarantine"

    @property
    def pending(self) -> Path:
        """Sessions whose index row may be missing: one marker each, removed once indexed."""
        return self.root / "pending"

    @property
    def index_path(self) -> Path:
        """The SQLite index (a cache)."""
        return self.root / "state.db"

    def ensure(self) -> Layout:
        """Create the private store directories; StoreDamaged (naming why) if that cannot be."""
        try:
            for path in (self.root, self.sessions, self.archived, self.quarantine,
                         self.root / "locks", self.pending):
                ensure_private_dir(path)
        except OSError as exc:
            raise StoreDamaged(f"cannot use {self.root} as a store: {exc.strerror or exc}") from None
        return self

    def lock_path(self, thread_id: str) -> Path:
        """The writer lock of a thread."""
        return self.root / "locks" / f"{ids.thread_id(thread_id)}.lock"

    def new_rollout_path(self, session_id: str, started: datetime) -> Path:
        """Path for a new session's rollout: sessions/YYYY/MM/DD/rollout-<UTC ts>-<id>.jsonl."""
        from datetime import timezone

        sid = ids.session_id(session_id)
        utc = started.astimezone(timezone.utc)
        stamp = utc.strftime("%Y%m%dT%H%M%S") + f"{utc.microsecond // 1000:03d}Z"
        day = self.sessions / f"{utc:%Y}" / f"{utc:%m}" / f"{utc:%d}"
        return day / f"rollout-{stamp}-{sid}.jsonl"

    def archived_path(self, live: Path) -> Path:
        """Where a live rollout goes when its thread is archived."""
        return self.archived / self.contained(live).relative_to(self.sessions)

    def live_path(self, archived: Path) -> Path:
        """Where an archived rollout goes back on unarchive."""
        return self.sessions / self.contained(archived).relative_to(self.archived)

    def relative(self, path: Path | str) -> str:
        """A path inside the store as the index keeps it: relative to the store root."""
        return str(self.contained(path).relative_to(self.root))

    def relatives(self, paths: Sequence[str]) -> list[str]:
        """The store-relative path of each file as its directory names it (each directory resolved
        once, no file followed: a symlink's own path, never its target's)."""
        dirs: dict[str, str] = {}  # directory -> its store-relative real path, with a slash
        out: list[str] = []
        for path in paths:
            head, name = os.path.split(path)
            if head not in dirs:
                inside = self.contained(head).relative_to(self.root).as_posix()
                dirs[head] = "" if inside == "." else inside + "/"
            out.append(dirs[head] + name)
        return out

    def resolve(self, path: Path | str) -> Path:
        """An index path (store-relative, or absolute for older rows) as a real path in the store."""
        return self.contained(self.root / path)

    def contained(self, path: Path | str) -> Path:
        """Return `path` if it lies inside the store root, else raise StoreDamaged."""
        real = Path(os.path.realpath(path))
        if os.path.commonpath([real, self.root]) != str(self.root):
            raise StoreDamaged(f"{path} lies outside the store {self.root}")
        return real

    def scan_rollouts(self) -> list[tuple[str, bool]]:
        """Every rollout file under the store as (path, archived), by a directory walk."""
        found: list[tuple[str, bool]] = []
        match = ROLLOUT_NAME.fullmatch
        for top, archived in ((self.sessions, False), (self.archived, True)):
            stack = [str(top)]
            while stack:  # scandir, not os.walk: one call per directory, no stat per file
                try:
                    entries = list(os.scandir(stack.pop()))
                except (FileNotFoundError, NotADirectoryError):
                    continue
                for entry in entries:  # as os.walk sorts them: a symlink to a directory is
                    if entry.is_dir():  # never followed, anything else is a file
                        if not entry.is_symlink():
                            stack.append(entry.path)
                    elif match(entry.name):
                        found.append((entry.path, archived))
        found.sort()
        return found
