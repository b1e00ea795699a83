"""The store's private directories: 0700, ours, never a symlink. Standard library only (a hook's
thin process creates its own small files with it)."""

from __future__ import annotations

import os
import stat

from ..errors import StoreDamaged

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    P = TypeVar("P", bound="str | os.PathLike[str]")


def ensure_private_dir(path: P, *, within: str | os.PathLike[str] | None = None) -> P:
    """Create `path` as 0700 (every missing level below `within` too, whatever the umask).

    Refuses a directory that is a symlink, not a directory, or owned by another user; and an
    empty path or the file system's root (ValueError: never made 0700 by mistake).
    """
    given: str | os.PathLike[str] = path
    target = os.fspath(given).rstrip("/")
    if not target:
        raise ValueError(f"{os.fspath(given)!r} is not a folder a store may make private")
    levels = [target]
    if within is not None:
        root = os.fspath(within).rstrip("/")
        levels = [up for up in reversed(_ancestors(target)) if up.startswith(root + "/")] + levels
    else:
        parent = os.path.dirname(target)
        if not os.path.exists(parent):
            os.makedirs(parent, exist_ok=True)
    for level in levels:
        try:  # noqa: SIM105 - contextlib is not loaded here (a hook's thin process)
            os.mkdir(level, 0o700)
        except FileExistsError:
            pass
        info = os.lstat(level)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            raise StoreDamaged(f"{level} is not a directory")
        if info.st_uid != os.getuid():
            raise StoreDamaged(f"{level} belongs to another user (uid {info.st_uid})")
        if info.st_mode & 0o777 != 0o700:
            os.chmod(level, 0o700)
    return path


def _ancestors(path: str) -> list[str]:
    """The folders above `path`, nearest first, as `Path(path).parents` names them."""
    out = []
    while (parent := os.path.dirname(path)) != path:
        out.append(parent)
        path = parent
    return out
