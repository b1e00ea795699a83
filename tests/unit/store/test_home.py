"""The default store root (`store.home`) is what platformdirs answers on Linux, without loading it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from platformdirs import user_data_path

from sessionkeeper.store import home


@pytest.mark.parametrize("xdg", [None, "", "relative/data", "/srv/data"])
@pytest.mark.parametrize("user_home", ["/home/dev", "/root"])
def test_the_default_root_is_the_per_user_data_directory_platformdirs_names(
        monkeypatch: pytest.MonkeyPatch, xdg: str | None, user_home: str) -> None:
    """No fixture: XDG_DATA_HOME unset, empty, relative (ignored) or absolute; two homes."""
    monkeypatch.delenv(home.ENV_HOME, raising=False)
    monkeypatch.setenv("HOME", user_home)
    if xdg is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
    assert home.default_root() == str(user_data_path("sessionkeeper", appauthor=False))


def test_sessionkeeper_home_wins_with_its_tilde_expanded(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    """Fixture: `tmp_path` as HOME; $SESSIONKEEPER_HOME given as ~/store."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(home.ENV_HOME, "~/store")
    assert home.default_root() == os.path.join(str(tmp_path), "store")
