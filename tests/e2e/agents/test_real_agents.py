"""The real Codex CLI and Claude Code write sessions; our readers read them (never skipped).

Each agent is installed from npm at its pinned version (install.sh), runs offline against our
fake model server on 127.0.0.1, in a scratch git repository with a throwaway HOME and agent root.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from sessionkeeper import agents
from sessionkeeper.agents.base import AgentFile
from sessionkeeper.recovery.replay import replay
from tests.conftest import git
from tests.e2e.agents.drive import BRANCH, Driver, version_of
from tests.unit._agents import ledger, tree_digest, validate

pytestmark = pytest.mark.timeout(900)
PINNED = {"codex": "0.171.0", "claude": "2.1.332"}


def _session(driver: Driver, root: Path | None = None) -> AgentFile:
    found = [f for f in agents.get(driver.agent).discover([root or driver.root]) if f.kind == "session"]
    assert len(found) == 1, found
    return found[0]


def test_the_pinned_version_of_each_agent_is_what_runs(started: Driver) -> None:
    """`started`: the CLI that wrote the session is the pinned one (or $SK_<AGENT>_VERSION)."""
    wanted = os.environ.get(f"SK_{started.agent.upper()}_VERSION") or PINNED[started.agent]
    shown = version_of(started.exe)
    assert wanted == "latest" or wanted in shown, shown


def test_the_real_session_is_read_with_its_ids_cwd_branch_and_model(started: Driver) -> None:
    """`started`: thread id = the id the agent printed; cwd, branch and model as it ran."""
    result = agents.get(started.agent).read(_session(started))
    meta, summary = result.meta, result.summary
    assert meta is not None and summary.status == "ok" and not result.damage and result.tail is None
    assert meta["thread_id"] == started.session_id and summary.thread_id == started.session_id
    assert os.path.realpath(meta["cwd"]) == os.path.realpath(started.repo)
    assert summary.branch == BRANCH
    expected_model = "gpt-5" if started.agent == "codex" else started.fake.requests[-1]["body"]["model"]
    assert summary.model == expected_model
    assert meta["client"]["version"] in version_of(started.exe)
    if started.agent == "codex":  # Codex records the commit it started at
        assert summary.head == git(started.repo, "rev-parse", "HEAD")
    assert summary.title == "Create a file please."


def test_the_shell_call_is_a_committed_operation_with_the_call_id_the_model_gave(started: Driver) -> None:
    """`started`: the one tool call the fake model handed out is in the ledger, committed."""
    [call] = started.fake.calls
    thread = replay([agents.get(started.agent).load(_session(started))])
    entry = ledger(thread).lookup(call)
    assert entry is not None and entry["status"] == "committed"
    assert entry["tool"] == ("exec_command" if started.agent == "codex" else "Bash")
    assert ledger(thread).in_doubt() == []


def test_a_transcript_cut_inside_the_tool_call_leaves_it_in_doubt(started: Driver, tmp_path: Path) -> None:
    """`started`, copied and cut right after the line that holds the tool call."""
    copy = Path(shutil.copytree(started.root, tmp_path / "root"))
    file = _session(started, copy)
    [call] = started.fake.calls
    data = file.path.read_bytes()
    end = data.index(b"\n", data.index(call.encode())) + 1
    file.path.write_bytes(data[:end])
    thread = replay([agents.get(started.agent).load(file)])
    assert [o["operation_id"] for o in ledger(thread).in_doubt()] == [call]


def test_reading_leaves_the_agent_root_unchanged(started: Driver) -> None:
    """`started`: a digest of the whole agent root before and after discovery and every read."""
    before = tree_digest(started.root)
    reader = agents.get(started.agent)
    for file in reader.discover([started.root]):
        first = reader.read(file)
        reader.read(file, first.checkpoint)
        if first.meta is not None:
            replay([first.rollout()])
    assert tree_digest(started.root) == before


def test_a_kill_9_inside_the_tool_call_leaves_it_in_doubt(fresh: Callable[[], Driver]) -> None:
    """`fresh`: the agent is killed (SIGKILL) while its shell call `sleep 20` runs."""
    driver = fresh()
    call = driver.crash_inside_a_tool_call("sleep 20")
    result = agents.get(driver.agent).read(_session(driver))
    assert result.summary.in_doubt == 1
    thread = replay([result.rollout()])
    assert [o["operation_id"] for o in ledger(thread).in_doubt()] == [call]


def test_a_resume_by_the_real_agent_appends_and_only_the_new_lines_are_parsed(
        fresh: Callable[[], Driver]) -> None:
    """`fresh`: start, read, resume with a second shell call, read again from the checkpoint."""
    driver = fresh()
    driver.run("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
    reader = agents.get(driver.agent)
    file = _session(driver)
    first = reader.read(file)
    driver.run("Another one.\nRUN: echo second > b.txt && echo wrote-b", resume=True)
    assert _session(driver).path == file.path  # the resume wrote to the same file
    later = reader.read(file, first.checkpoint)
    total_lines = file.path.read_bytes().count(b"\n")
    assert (later.mode, later.reason) == ("appended", "grown")
    assert later.lines_parsed == total_lines - first.summary.lines > 0
    second = driver.fake.calls[-1]
    assert [(r["operation_id"], r["status"]) for r in later.records if r["type"] == "operation"] == [
        (second, "started"), (second, "committed")]
    whole = reader.read(file)
    assert whole.records == first.records + later.records and whole.summary == later.summary


def test_the_resume_check_is_ok_in_place_and_drift_after_a_checkout(fresh: Callable[[], Driver]) -> None:
    """`fresh`: the real session checked against its own repo, then after `git checkout -b`."""
    driver = fresh()
    driver.run("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
    thread = replay([agents.get(driver.agent).load(_session(driver))])
    assert validate(thread, driver.repo) == ([], "ok")
    git(driver.repo, "checkout", "-q", "-b", "drifted")
    differences, verdict = validate(thread, driver.repo)
    assert verdict == "drift"
    assert [(d.kind, d.recorded, d.current) for d in differences] == [("branch", BRANCH, "drifted")]
