"""Real paths of many files under one root, each directory resolved once.

`RealPaths(root).real(rel)` equals `os.path.realpath(os.path.join(realpath(root), rel))`: the
directory part is resolved (and remembered for this object's life only — make one per pass, as
symlinks may change between passes), the last component only when it is a symlink (one lstat).
"""

from __future__ import annotations

import os


class RealPaths:
    """Resolve workspace-relative paths under `root`, one realpath per directory."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.realpath(root)
        self._inside = self.root.rstrip(os.sep) + os.sep
        self._dirs: dict[str, str] = {}

    def real(self, relpath: str) -> str:
        """The real path `relpath` names (as `os.path.realpath` would give it)."""
        head, name = os.path.split(relpath)
        directory = self._dirs.get(head)
        if directory is None:
            directory = self._dirs[head] = os.path.realpath(os.path.join(self.root, head))
        path = os.path.join(directory, name)
        if name in ("", ".", "..") or os.path.islink(path):
            return os.path.realpath(path)
        return path

    def within(self, path: str) -> bool:
        """True when a real path is the root or lies under it."""
        return path == self.root or path.startswith(self._inside)
