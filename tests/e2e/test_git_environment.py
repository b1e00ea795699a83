"""An agent whose environment points git at another repository (GIT_DIR, GIT_WORK_TREE,
GIT_INDEX_FILE exported: a dotfile-repository setup, an agent started from inside a git hook):
`--check-resume` and the hooks, as real processes, still capture and compare the workspace's
own repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.hooks import digest
from sessionkeeper.recovery.gitrun import LOCAL_ENV
from sessionkeeper.recovery.subsystems.worktree import Worktree
from tests.conftest import git, init_repo
from tests.unit._hooks import SID, journal, payload, records, run


@pytest.fixture
def other(tmp_path: Path) -> dict[str, str]:
    """The environment of an agent whose git variables name repository B (not the workspace)."""
    b = init_repo(tmp_path / "repo-b", {"dotfile": "b\n"}, message="B's own history")
    return {"GIT_DIR": str(b / ".git"), "GIT_WORK_TREE": str(b),
            "GIT_INDEX_FILE": str(b / ".git" / "index")}


def test_check_resume_with_the_agents_git_dir_compares_the_workspace_repository(
        store_dir: Path, repo: Path, other: dict[str, str]) -> None:
    """Fixture: `repo` (A, the workspace) with a session started in it, `other` (B) exported."""
    session = Keeper(store_dir).start(repo)
    session.close()
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", "--check-resume",
                           session.thread_id, "--workspace", str(repo), "--json", "--store",
                           str(store_dir)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **other})
    report = orjson.loads(done.stdout)
    assert (done.returncode, report["verdict"]) == (0, "ok"), (report.get("differences"),
                                                               done.stderr)


def test_a_hook_with_the_agents_git_dir_records_and_verifies_the_workspace_repository(
        store_dir: Path, repo: Path, other: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: `repo` (A, the agent's cwd), `other` (B, with a file changed) exported to every
    hook process; a start, a shell call that creates a.txt in A, then a resume in place."""
    Path(other["GIT_WORK_TREE"], "dotfile").write_text("changed in B\n")

    def hook(event: str, **fields: object) -> subprocess.CompletedProcess[str]:
        done = run("codex", event, json.dumps(payload("codex", event, repo, **fields)), store_dir,
                   env=other)
        assert done.returncode == 0 and "failed open" not in done.stderr, done.stderr
        return done

    hook("SessionStart", source="startup")
    (repo / "a.txt").write_text("hi\n")
    hook("PostToolUse", tool_name="Bash", tool_input={"command": "echo hi > a.txt"},
         tool_response="", tool_use_id="call_sh1")
    folded = journal(store_dir, "codex")
    recorded = folded.state.get(Worktree).recorded() if folded is not None else None
    assert recorded is not None and (recorded.worktree, recorded.head) == (
        str(repo), git(repo, "rev-parse", "HEAD"))
    assert [r["path"] for r in records(store_dir, "codex") if r["type"] == "file_change"] == [
        "a.txt"]
    for name, value in other.items():  # the fast check, in this process, as the hook sees it
        monkeypatch.setenv(name, value)
    assert digest.proves_ok(digest.load(store_dir, "codex", SID), str(repo))
    text = json.loads(hook("SessionStart", source="resume").stdout)["hookSpecificOutput"][
        "additionalContext"]
    assert "nothing changed since it last ran" in text, text


def test_the_variables_we_drop_are_all_that_git_lists_as_repository_local(tmp_path: Path) -> None:
    """Fixture: none; this machine's git asked for its list (`git rev-parse --local-env-vars`)."""
    listed = subprocess.run(["git", "rev-parse", "--local-env-vars"], cwd=tmp_path, check=True,
                            capture_output=True, text=True).stdout.split()
    assert "GIT_DIR" in listed and set(listed) <= LOCAL_ENV
