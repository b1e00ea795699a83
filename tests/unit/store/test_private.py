"""Private folders (`store.private`): made 0700 level by level; never the root or an empty path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessionkeeper.store.private import ensure_private_dir


def test_missing_levels_below_within_are_made_0700(tmp_path: Path) -> None:
    """Fixture: `tmp_path`; two missing levels below it, the umask wide open."""
    old = os.umask(0)
    try:
        made = ensure_private_dir(tmp_path / "a" / "b", within=tmp_path)
    finally:
        os.umask(old)
    assert made == tmp_path / "a" / "b"
    assert {(p.stat().st_mode & 0o777) for p in (tmp_path / "a", made)} == {0o700}


@pytest.mark.parametrize("path", ["", "/", "//"])
def test_the_root_or_an_empty_path_is_refused_and_left_as_it_is(path: str) -> None:
    """No fixture: what `os.path.dirname` of a bare file name gives ('') is not taken for `/`
    (a resident started with a bare socket name once made `/` 0700)."""
    before = os.stat("/").st_mode
    with pytest.raises(ValueError, match="not a folder a store may make private"):
        ensure_private_dir(path)
    assert os.stat("/").st_mode == before
