"""The real Codex CLI and Claude Code sessions through `sessionkeeper` itself (never skipped).

Each agent (pinned, from npm) runs one real session with a shell call against our fake model
server; then the CLI lists it, checks it in place, after a checkout, after the repository was
moved, and cut inside the tool call — with a digest of the agent's whole home after every command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import git
from tests.e2e.agents.drive import BRANCH, Driver
from tests.unit._agents import tree_digest

pytestmark = pytest.mark.timeout(900)


def sk(driver: Driver, *args: str, root: Path | None = None, data_home: Path) -> Any:
    """`sessionkeeper ... --json` on the per-user store under `data_home`, reading only this
    agent's home; asserts the home is unchanged afterwards and returns the JSON printed."""
    home = root or driver.root
    before = tree_digest(home)
    flag = "--codex-home" if driver.agent == "codex" else "--claude-home"
    env = {k: v for k, v in os.environ.items() if k != "SESSIONKEEPER_HOME"}
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", *args, "--json", flag, str(home),
                           "--agents", driver.agent],
                          capture_output=True, text=True, timeout=120,
                          env={**env, "XDG_DATA_HOME": str(data_home), "NO_COLOR": "1"})
    assert tree_digest(home) == before, f"{args} changed the {driver.agent} home"
    assert done.returncode in (0, 10, 11), done.stderr
    return orjson.loads(done.stdout)


def test_the_cli_lists_checks_and_relocates_a_real_session(fresh: Callable[[], Driver],
                                                           tmp_path: Path) -> None:
    """`fresh`: one real session in a scratch repository on feature/sk-test."""
    driver = fresh()
    driver.run("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
    data = tmp_path / "xdg"
    [row] = sk(driver, "list", data_home=data)
    assert (row["thread_id"], row["agent"], row["branch"]) == (driver.session_id, driver.agent,
                                                                BRANCH)
    assert row["cwd"] == os.path.realpath(driver.repo)
    thread = str(driver.session_id)
    ok = sk(driver, "--check-resume", thread, "--workspace", str(driver.repo), data_home=data)
    assert (ok["verdict"], ok["agent"], ok["differences"]) == ("ok", driver.agent, [])
    assert ok["facts"] and all(f["exact"] is False for k, f in ok["facts"].items()
                               if k != "identity")
    git(driver.repo, "checkout", "-q", "-b", "drifted")
    drift = sk(driver, "--check-resume", thread, "--workspace", str(driver.repo), data_home=data)
    assert drift["verdict"] == "drift"
    assert [(d["kind"], d["recorded"], d["current"]) for d in drift["differences"]] == [
        ("branch", BRANCH, "drifted")]
    git(driver.repo, "checkout", "-q", BRANCH)
    moved = driver.repo.with_name("repo-moved")
    os.rename(driver.repo, moved)
    lost = sk(driver, "--check-resume", thread, "--workspace", str(driver.repo), data_home=data)
    assert lost["verdict"] == "blocked" and lost["relocate_to"] == str(moved)
    resumed = sk(driver, "resume", thread, "--workspace", str(driver.repo), "--decision",
                 "relocate", data_home=data)
    expected = (["codex", "resume", thread] if driver.agent == "codex"
                else ["claude", "--resume", thread])
    assert resumed["command"]["argv"] == expected and resumed["command"]["cwd"] == str(moved)


def test_the_cli_reports_a_real_tool_call_cut_off_as_in_doubt(fresh: Callable[[], Driver],
                                                              tmp_path: Path) -> None:
    """`fresh`: a real session; a copy of its home cut right after the tool-call line."""
    driver = fresh()
    driver.run("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
    [call] = driver.fake.calls
    copy = Path(shutil.copytree(driver.root, tmp_path / "home"))
    pattern = "sessions/**/rollout-*.jsonl" if driver.agent == "codex" else "projects/*/*.jsonl"
    [transcript] = sorted(copy.glob(pattern))
    data = transcript.read_bytes()
    transcript.write_bytes(data[:data.index(b"\n", data.index(call.encode())) + 1])
    report = sk(driver, "--check-resume", str(driver.session_id), "--workspace", str(driver.repo),
                root=copy, data_home=tmp_path / "xdg")
    assert [o["operation_id"] for o in report["in_doubt_operations"]] == [call]


@pytest.mark.parametrize("listed", [True, False], ids=["listed-before-the-rename", "never-listed"])
def test_a_real_session_in_a_renamed_repository_is_offered_as_relocated(
        fresh: Callable[[], Driver], tmp_path: Path, listed: bool) -> None:
    """`fresh`: one real session that creates a file in a scratch repository `repo` (two
    commits); the folder renamed (`mv repo repo-renamed`) after Session Keeper listed the session,
    or before it ever saw it (no identity remembered in the index)."""
    driver = fresh()
    driver.run("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
    data = tmp_path / "xdg"
    if listed:
        [row] = sk(driver, "list", data_home=data)
        assert row["thread_id"] == driver.session_id
    recorded = os.path.realpath(driver.repo)
    renamed = driver.repo.with_name("repo-renamed")
    os.rename(driver.repo, renamed)
    thread = str(driver.session_id)
    report = sk(driver, "--check-resume", thread, "--workspace", str(renamed), data_home=data)
    assert report["verdict"] == "drift", report["differences"]
    assert [(d["kind"], d["recorded"], d["current"]) for d in report["differences"]] == [
        ("relocated", recorded, os.path.realpath(renamed))]
    assert report["facts"]["identity"]["exact"] is (listed or driver.agent == "codex")
    assert report["facts"]["identity"]["origin"] == ("index" if listed else "workspace")
    resumed = sk(driver, "resume", thread, "--workspace", str(renamed), "--decision", "continue",
                 data_home=data)
    assert resumed["command"]["cwd"] == str(renamed)
    # from the old path: blocked, and the repository found again next to it
    lost = sk(driver, "--check-resume", thread, "--workspace", str(driver.repo), data_home=data)
    assert (lost["verdict"], lost["relocate_to"]) == ("blocked", os.path.realpath(renamed))
