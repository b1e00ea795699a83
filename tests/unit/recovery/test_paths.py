"""RealPaths resolves as os.path.realpath does, each directory once (a real tree with symlinks)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessionkeeper.recovery.baseline import PathEscapesRoot, file_hash
from sessionkeeper.recovery.paths import RealPaths


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A workspace with files, a symlinked directory, a symlinked file, a link leading out."""
    root = tmp_path / "ws"
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a")
    (root / "src" / "deep" / "b.py").write_text("b")
    (root / "alias").symlink_to(root / "src")
    (root / "src" / "link.py").symlink_to(root / "src" / "deep" / "b.py")
    (tmp_path / "outside.txt").write_text("secret")
    (root / "src" / "out.txt").symlink_to(tmp_path / "outside.txt")
    (root / "up").symlink_to(tmp_path)
    return root


RELS = ["src/a.py", "src/deep/b.py", "alias/a.py", "alias/deep/b.py", "src/link.py",
        "alias/link.py", "src/out.txt", "up/outside.txt", "missing/x.py", "src/../src/a.py",
        "src", ".", "src/deep/../a.py", "alias/deep/none.py"]


def test_real_paths_equal_os_realpath_for_every_kind_of_path(tree: Path) -> None:
    """Fixture: `tree` (regular files, symlinked directory and files, links out, missing)."""
    paths = RealPaths(tree)
    for rel in RELS:
        assert paths.real(rel) == os.path.realpath(os.path.join(os.path.realpath(tree), rel)), rel


def test_file_hash_with_shared_real_paths_refuses_links_leading_out(tree: Path) -> None:
    """Fixture: `tree`; one RealPaths shared by every call, as a scan does."""
    paths = RealPaths(tree)
    assert file_hash(tree, "alias/link.py", paths=paths) == file_hash(tree, "src/deep/b.py")
    for rel in ("src/out.txt", "up/outside.txt"):
        with pytest.raises(PathEscapesRoot):
            file_hash(tree, rel, paths=paths)
    assert file_hash(tree, "missing/x.py", paths=paths) is None
    assert file_hash(tree, "src", paths=paths) is None
