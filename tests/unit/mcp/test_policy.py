"""The rewind policy of the agents' MCP server: off unless the user allows it (environment, then
git config sessionkeeper.mcpRewind; fixture: `repo`, a real git repository, no user git config)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionkeeper.mcp.policy import rewind_setting
from tests.conftest import git

NO_USER_CONFIG = {"GIT_CONFIG_GLOBAL": "/dev/null"}


def test_rewind_is_off_by_default(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`repo`, nothing set."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    setting = rewind_setting(str(repo), env=NO_USER_CONFIG)
    assert (setting.allowed, setting.source, setting.note) == (False, "default", None)


def test_the_repositorys_git_config_allows_it_and_the_environment_overrides(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`repo` with `git config sessionkeeper.mcpRewind allow`; then the environment says off."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    git(repo, "config", "sessionkeeper.mcpRewind", "allow")
    allowed = rewind_setting(str(repo), env=NO_USER_CONFIG)
    assert allowed.allowed and allowed.source == "git config sessionkeeper.mcpRewind"
    off = rewind_setting(str(repo), env={**NO_USER_CONFIG, "SESSIONKEEPER_MCP_REWIND": "off"})
    assert not off.allowed and off.source == "SESSIONKEEPER_MCP_REWIND"


def test_an_unknown_value_counts_as_off_and_says_so(repo: Path) -> None:
    """`repo`; the environment holds a typo."""
    setting = rewind_setting(str(repo), env={"SESSIONKEEPER_MCP_REWIND": "alow"})
    assert not setting.allowed and "unknown value 'alow'" in (setting.note or "")
