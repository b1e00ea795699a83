"""The README's CI recipe, end to end: a store committed in one clone, checked in another clone.

The check finds the thread by repository identity (the runner's path differs), says the only
difference is the relocation, and writes nothing into the committed store.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from ..conftest import git, init_repo


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in `cwd`."""
    return subprocess.run([sys.executable, "-m", "sessionkeeper", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})})


def test_a_store_committed_in_one_clone_checks_ok_in_another_and_stays_untouched(tmp_path):
    """Fixture: repository `dev` with a store in .sessions recorded and committed; `ci` a clone."""
    dev = init_repo(tmp_path / "dev", {"app.py": "print('hi')\n"})
    started = cli("start", "--workspace", str(dev), "--title", "ci story", "--store", ".sessions",
                  "--json", cwd=dev)
    assert started.returncode == 0, started.stderr
    cli("list", "--store", ".sessions", cwd=dev)  # the recording side may bring its index up
    git(dev, "add", "-f", ".sessions")
    git(dev, "commit", "-q", "-m", "record the agent session")
    ci = tmp_path / "runner" / "work" / "ci"
    git(tmp_path, "clone", "-q", str(dev), str(ci))
    before = git(ci, "status", "--porcelain", "--ignored")

    checked = cli("--check-resume", "--latest", "--workspace", str(ci), "--store", ".sessions",
                  "--allow-drift", "--json", cwd=ci, env={"GITHUB_ACTIONS": "true"})
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = orjson.loads(checked.stdout)  # valid JSON: annotations went to stderr
    assert report["thread_id"] == orjson.loads(started.stdout)["thread_id"]
    assert [d["kind"] for d in report["differences"]] == ["relocated", "head"]
    assert report["differences"][1]["detail"] == (
        f"1 commit(s) ahead of the recorded HEAD: {git(ci, 'log', '-1', '--format=%h %s')}")
    assert "::warning title=Session Keeper resume drift::" in checked.stderr
    assert git(ci, "status", "--porcelain", "--ignored") == before  # nothing written in .sessions

    strict = cli("--check-resume", "--latest", "--workspace", str(ci), "--store", ".sessions",
                 "--allow-relocation", cwd=ci)
    assert strict.returncode == 10  # HEAD moved too: only a relocation alone passes


def test_allow_relocation_passes_a_clone_at_the_recorded_head(tmp_path):
    """Fixture: a thread recorded in `dev` with a store outside it; `ci` cloned at the same HEAD."""
    dev = init_repo(tmp_path / "dev", {"app.py": "print('hi')\n"})
    store = str(tmp_path / "store")
    assert cli("start", "--workspace", str(dev), "--store", store, cwd=dev).returncode == 0
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", "-b", "main", str(dev), str(ci))
    checked = cli("--check-resume", "--latest", "--workspace", str(ci), "--store", store,
                  "--allow-relocation", cwd=ci)
    assert checked.returncode == 0, checked.stdout
    assert "relocated" in checked.stdout


def test_read_only_commands_create_nothing_in_a_missing_store(tmp_path):
    """Fixture: a directory with no store; list and --check-resume pointed at .sessions."""
    work = init_repo(tmp_path / "w", {"a": "a"})
    listed = cli("list", "--store", ".sessions", cwd=work)
    assert listed.returncode == 0 and listed.stdout.strip() == "no threads"
    checked = cli("--check-resume", "--latest", "--workspace", ".", "--store", ".sessions", cwd=work)
    assert checked.returncode == 66
    assert not (work / ".sessions").exists()
