"""`sessionkeeper trailer` and `git-hook install|uninstall` as real processes in a real repository:
commits holding the agent's lines get the trailers once, others none; an earlier hook is kept."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from ..conftest import git

AGENT_LINES = b"def charge(amount, fee=0):\n    return round(amount + fee, 2)\n"
EARLIER_HOOK = "#!/bin/sh\necho \"earlier hook ran for $1\" >> \"$(dirname \"$0\")/../earlier.log\"\n"


def cli(store: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m sessionkeeper --store STORE ARGS` as a real process."""
    return subprocess.run([sys.executable, "-m", "sessionkeeper", "--store", str(store), *args],
                          capture_output=True, text=True, timeout=60, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1"})


def commit(repo: Path, message: str) -> str:
    """Commit what is staged (hooks run) and return the commit message git stored."""
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "log", "-1", "--format=%B")


@pytest.fixture
def agent_thread(store_dir: Path, repo: Path) -> dict[str, Any]:
    """`repo` with an earlier prepare-commit-msg hook; a CLI thread where the agent rewrote
    payment.py (recorded without hashes, so its lines are known)."""
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "prepare-commit-msg").write_text(EARLIER_HOOK)
    (hooks / "prepare-commit-msg").chmod(0o755)
    started = orjson.loads(cli(store_dir, "start", "--workspace", str(repo), "--json").stdout)
    (repo / "payment.py").write_bytes(AGENT_LINES)
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", "--store", str(store_dir),
                           "record", "--session", started["session_id"]],
                          input='{"type":"file_change","path":"payment.py"}\n', text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return started


def test_trailer_prints_the_coauthor_and_the_session(store_dir: Path, repo: Path,
                                                     agent_thread: dict[str, Any]) -> None:
    """Fixture: `agent_thread` (a native thread: the generic identity unless one is given)."""
    thread = agent_thread["thread_id"]
    out = cli(store_dir, "trailer", thread).stdout.splitlines()
    assert out == ["Co-authored-by: AI agent <agent@sessionkeeper.invalid>",
                   f"Agent-Session: {thread}"]
    named = cli(store_dir, "trailer", "--coauthor", "Pair Bot <bot@example.com>", cwd=repo)
    assert named.stdout.splitlines()[0] == "Co-authored-by: Pair Bot <bot@example.com>"
    assert cli(store_dir, "trailer", thread, "--coauthor", "no email").returncode == 65


def test_git_hook_adds_trailers_to_agent_commits_only_and_uninstalls_cleanly(
        store_dir: Path, repo: Path, agent_thread: dict[str, Any]) -> None:
    """Fixture: `agent_thread`; the hooks installed twice, two commits, then uninstalled."""
    hooks = repo / ".git" / "hooks"
    first = cli(store_dir, "git-hook", "install", "--repo", str(repo))
    assert first.returncode == 0 and "kept prepare-commit-msg" in first.stdout
    assert cli(store_dir, "git-hook", "install", "--repo", str(repo)).stdout.strip() == "nothing to do"
    assert (hooks / "prepare-commit-msg.pre-sessionkeeper").read_text() == EARLIER_HOOK
    assert (hooks / "commit-msg").stat().st_mode & stat.S_IXUSR

    git(repo, "add", "payment.py")
    message = commit(repo, "round with a fee")
    thread = agent_thread["thread_id"]
    assert message.splitlines()[-2:] == ["Co-authored-by: AI agent <agent@sessionkeeper.invalid>",
                                         f"Agent-Session: {thread}"]
    assert "earlier hook ran" in (repo / ".git" / "earlier.log").read_text()

    (repo / "NOTES.md").write_text("written by the user alone\n")
    git(repo, "add", "NOTES.md")
    assert "Agent-Session" not in commit(repo, "user notes")

    removed = cli(store_dir, "git-hook", "uninstall", "--repo", str(repo))
    assert removed.returncode == 0
    assert (hooks / "prepare-commit-msg").read_text() == EARLIER_HOOK
    assert not (hooks / "commit-msg").exists()
    assert not (hooks / "prepare-commit-msg.pre-sessionkeeper").exists()


def test_git_hook_install_outside_a_repository_is_a_typed_error(store_dir: Path,
                                                                tmp_path: Path) -> None:
    """Fixture: a plain directory that is no git repository."""
    plain = tmp_path / "plain"
    plain.mkdir()
    done = cli(store_dir, "git-hook", "install", "--repo", str(plain))
    assert done.returncode == 64 and "not inside a git repository" in done.stderr
