"""The hook policy a session's tool hooks keep (`hooks.policy_cache`): kept, and missed when it
may be stale."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from sessionkeeper.hooks import policy_cache
from sessionkeeper.hooks.policy_cache import KEEP_S, Lookup, answer, kept
from tests.conftest import git
from tests.unit._hooks import SID

KEY = "sessionkeeper.hookPolicy"


@pytest.fixture
def root(tmp_path: Path) -> str:
    """A journal root with its spool directory."""
    (tmp_path / "journals" / "claude" / "spool").mkdir(parents=True)
    return str(tmp_path / "journals" / "claude")


def _found(root: str, cwd: Path) -> str | Lookup:
    """One lookup as a tool hook makes it, git's answer read (and so kept) when git ran."""
    got = answer(root, SID, str(cwd), KEY)
    if isinstance(got, Lookup):
        got.result()
    return got


def test_an_answer_is_kept_for_the_next_call_of_the_session(root: str, repo: Path) -> None:
    """Fixture: `repo` with the policy set off locally; two calls."""
    git(repo, "config", KEY, "off")
    assert isinstance(_found(root, repo), Lookup)  # git ran
    assert _found(root, repo) == "off"  # kept: no git
    assert kept(root, SID, str(repo / "sub")) is None  # another cwd: a miss


def test_an_unset_policy_is_kept_as_empty(root: str, repo: Path, monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    """Fixture: `repo` with no policy anywhere (an empty HOME)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert isinstance(_found(root, repo), Lookup)
    assert _found(root, repo) == ""


def test_a_policy_set_with_git_config_is_seen_by_the_next_call(root: str, repo: Path) -> None:
    """Fixture: `repo`; the policy set locally, then changed, between calls."""
    git(repo, "config", KEY, "warn")
    _found(root, repo)
    assert _found(root, repo) == "warn"
    git(repo, "config", KEY, "off")
    assert isinstance(_found(root, repo), Lookup)  # the repository's config changed: a miss
    assert _found(root, repo) == "off"


def test_a_user_setting_in_the_global_config_is_seen_by_the_next_call(
        root: str, repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fixture: `repo`, a HOME of the test's own; `git config --global` between calls."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    _found(root, repo)
    subprocess.run(["git", "config", "--global", KEY, "off"], check=True, cwd=repo,
                   env={"HOME": str(home), "PATH": os.environ["PATH"]})
    assert isinstance(_found(root, repo), Lookup)
    assert _found(root, repo) == "off"


def test_a_linked_worktree_is_stamped_with_the_repository_config(root: str, repo: Path,
                                                                  tmp_path: Path) -> None:
    """Fixture: `repo` and a linked worktree of it; the main config changed between calls."""
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked), "-b", "side")
    assert policy_cache.stamp(str(linked))[0][0] == str(repo / ".git" / "config")
    _found(root, linked)
    git(repo, "config", KEY, "off")
    assert isinstance(_found(root, linked), Lookup)
    assert _found(root, linked) == "off"


def test_a_named_global_config_is_the_one_stamped(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    """Fixture: $GIT_CONFIG_GLOBAL naming a file of the test's own."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "global"))
    assert [entry[0] for entry in policy_cache.stamp(str(repo))] == [
        str(repo / ".git" / "config"), str(tmp_path / "global")]


def test_an_old_or_damaged_answer_is_a_miss(root: str, repo: Path) -> None:
    """Fixture: `repo`; the kept answer aged past KEEP_S, then replaced by garbage."""
    _found(root, repo)
    path = Path(root) / "spool" / f"{SID}{policy_cache.SUFFIX}"
    data = json.loads(path.read_text())
    data["at"] = time.time() - KEEP_S - 1
    path.write_text(json.dumps(data))
    assert kept(root, SID, str(repo)) is None
    for junk in (b"", b"{", b"[]", b'{"cwd": 1}', os.urandom(64)):
        path.write_bytes(junk)
        assert kept(root, SID, str(repo)) is None


def test_no_spool_directory_means_nothing_kept_and_no_error(tmp_path: Path, repo: Path) -> None:
    """Fixture: a journal root without its spool directory (no SessionStart yet)."""
    root = str(tmp_path / "none")
    assert isinstance(_found(root, repo), Lookup)
    assert kept(root, SID, str(repo)) is None
