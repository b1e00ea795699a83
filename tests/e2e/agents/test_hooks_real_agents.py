"""The real Codex CLI and Claude Code run Session Keeper's hooks, installed by `sessionkeeper hooks
install` into throwaway config dirs (never skipped; offline, our fake model servers on 127.0.0.1).

A session starts on a branch with a tool call; the branch is switched (a new commit); the resume
request the fake model receives carries the drift; a resume from another repository never
reaches the model (Codex stops, Claude's first prompt is blocked with the reason); the tool
calls are in the journal's ledger with the ids the model gave; uninstall restores the agent's
config files byte for byte.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sessionkeeper.agents.importer import AgentSources
from sessionkeeper.api import Keeper
from tests.conftest import git, init_repo
from tests.e2e.agents.drive import BRANCH, Driver

pytestmark = pytest.mark.timeout(900)
SK = str(Path(sys.executable).parent / "sessionkeeper")
THEIRS = {"hooks": [{"type": "command", "command": "/bin/true their-own-hook", "timeout": 5}]}


def _sk(*args: str) -> dict[str, Any]:
    done = subprocess.run([SK, *args, "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _config_files(driver: Driver) -> dict[str, bytes | None]:
    names = ["hooks.json", "config.toml"] if driver.agent == "codex" else ["settings.json"]
    return {n: (driver.root / n).read_bytes() if (driver.root / n).exists() else None for n in names}


def _their_config(driver: Driver) -> None:
    """The agent's config as a user has it: another tool's hook and settings of their own."""
    if driver.agent == "codex":
        (driver.root / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [THEIRS]}}, indent=2))
    else:
        (driver.root / "settings.json").write_text(json.dumps(
            {"hooks": {"Stop": [THEIRS]}, "cleanupPeriodDays": 30}, indent=4))


@pytest.fixture
def hooked(fresh: Callable[[], Driver], tmp_path: Path) -> Iterator[tuple[Driver, Path]]:
    """`fresh` agent with a config of its own, our hooks installed by `sessionkeeper hooks install`."""
    driver = fresh()
    _their_config(driver)
    store = tmp_path / "store"
    out = _sk("hooks", "install", "--agent", driver.agent, "--config-dir", str(driver.root),
              "--store", str(store))
    [entry] = out["agents"]
    assert entry["status"]["installed"] is True
    assert entry["status"]["trusted"] is (True if driver.agent == "codex" else None)
    yield driver, store


def _requests_after(driver: Driver, count: int) -> str:
    return json.dumps([r["body"] for r in driver.fake.requests[count:]], ensure_ascii=False)


def _resume_in(driver: Driver, cwd: Path, prompt: str,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(driver.args(prompt, resume=True), cwd=cwd, env={**driver.env(), **(env or {})},
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)


def test_a_drifted_resume_reaches_the_model_with_what_changed(hooked: tuple[Driver, Path]) -> None:
    """`hooked`: start on feature/sk-test with a shell call; commit; a new branch with a commit."""
    driver, store = hooked
    driver.run("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
    old = git(driver.repo, "rev-parse", "HEAD")
    git(driver.repo, "add", "-A")
    git(driver.repo, "commit", "-qm", "agent work")
    git(driver.repo, "checkout", "-q", "-b", "drifted")
    (driver.repo / "README").write_text("base\ntwo\ndrift\n")
    git(driver.repo, "commit", "-qam", "drift commit")
    new = git(driver.repo, "rev-parse", "HEAD")
    seen = len(driver.fake.requests)
    driver.run("Another one.\nRUN: echo second > b.txt && echo wrote-b", resume=True)
    sent = _requests_after(driver, seen)
    assert "the workspace CHANGED since the session last ran" in sent
    assert f"branch: {BRANCH} → drifted" in sent
    assert f"HEAD: {old[:10]} → {new[:10]}" in sent and "drift commit" in sent
    ledger = Keeper(store, read_only=True).read_journal(driver.agent, str(driver.session_id))
    assert ledger is not None
    ops = ledger.state.summaries()["operations"]
    assert ops["in_doubt"] == 0 and ops["committed"] == 2
    recorded = [r["operation_id"] for rollout in Keeper(store, read_only=True).journal_rollouts(
        driver.agent, str(driver.session_id)) for r in rollout.records
        if r["type"] == "operation" and r["status"] == "committed"]
    assert recorded == driver.fake.calls  # the ids the model handed out, in order
    files = ledger.state.summaries()["file_history"]
    assert files["files"] >= 2  # a.txt and b.txt, with their content kept
    status = _sk("hooks", "status", "--agent", driver.agent, "--config-dir", str(driver.root),
                 "--store", str(store))["agents"][0]
    assert status["last_run"] is not None and status["calls"] >= 8


def test_a_resume_in_another_repository_never_reaches_the_model(hooked: tuple[Driver, Path],
                                                                tmp_path: Path) -> None:
    """`hooked`: a session started in its repository, resumed from an unrelated repository."""
    driver, store = hooked
    driver.run("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
    other = init_repo(tmp_path / "other-repo", {"X": "x\n"}, message="unrelated")
    seen = len(driver.fake.requests)
    done = _resume_in(driver, other, "Third prompt SK-OTHER")
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(driver.fake.requests) == seen  # no model request at all
    if driver.agent == "claude":
        result = json.loads(done.stdout)["result"]
        assert "UserPromptSubmit operation blocked by hook" in result
        assert "Session Keeper stopped this resume (blocked): another repository" in result
        assert f"claude --resume {driver.session_id}" in result
    journal = Keeper(store, read_only=True).journal_rollouts(driver.agent, str(driver.session_id))
    stops = [r for rollout in journal for r in rollout.records
             if r["type"] == "lifecycle" and r.get("decision") == "cancel"]
    assert len(stops) == 1 and "blocked" in stops[0]["reason"]
    # the control: with the policy off the same resume does reach the model
    again = _resume_in(driver, other, "Fourth prompt", env={"SESSIONKEEPER_HOOK_POLICY": "off"})
    assert again.returncode == 0 and len(driver.fake.requests) > seen


def test_uninstall_restores_the_agents_config_byte_for_byte(fresh: Callable[[], Driver],
                                                            tmp_path: Path) -> None:
    """`fresh` agent with a config of its own: install twice, run a session, uninstall."""
    driver = fresh()
    _their_config(driver)
    before = _config_files(driver)
    store = tmp_path / "store"
    args = ["--agent", driver.agent, "--config-dir", str(driver.root), "--store", str(store)]
    _sk("hooks", "install", *args)
    installed = _config_files(driver)
    assert _sk("hooks", "install", *args)["agents"][0]["changed"] == []  # idempotent
    assert _config_files(driver) == installed
    theirs = json.loads(installed["hooks.json" if driver.agent == "codex" else "settings.json"] or b"")
    assert theirs["hooks"]["Stop"] == [THEIRS]
    driver.run("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
    out = _sk("hooks", "uninstall", *args)["agents"][0]
    assert _config_files(driver) == before, out
    assert _sk("hooks", "status", *args)["agents"][0]["installed"] is False


def _app_server_hooks(driver: Driver) -> list[dict[str, Any]]:
    """`codex app-server` JSON-RPC hooks/list: what the real Codex makes of the installed hooks."""
    proc = subprocess.Popen([str(driver.exe), "app-server"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=driver.repo,
                            env=driver.env(), text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for request in ({"id": 1, "method": "initialize",
                         "params": {"clientInfo": {"name": "sk-test", "title": "sk", "version": "0"}}},
                        {"method": "initialized"},
                        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(driver.repo)]}}):
            proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 1)
            if not ready:
                continue
            line = proc.stdout.readline()
            if not line:
                break
            message: dict[str, Any] = json.loads(line) if line.startswith("{") else {}
            if message.get("id") == 2:
                return [h for entry in message["result"]["data"] for h in entry["hooks"]]
        raise AssertionError("codex app-server gave no hooks/list answer")
    finally:
        proc.kill()
        proc.wait(timeout=30)


@pytest.mark.parametrize("fresh", ["codex"], indirect=True)
def test_codex_itself_reports_our_hooks_as_trusted_with_the_hash_we_wrote(
        hooked: tuple[Driver, Path]) -> None:
    """`hooked` Codex: its app-server's hooks/list (the trust review's data) after our install."""
    driver, _ = hooked
    hooks = _app_server_hooks(driver)
    ours = [h for h in hooks if "sessionkeeper" in (h.get("command") or "")]
    assert len(ours) == 6 and {h["trustStatus"] for h in ours} == {"trusted"}
    theirs = [h for h in hooks if "their-own-hook" in (h.get("command") or "")]
    assert [h["trustStatus"] for h in theirs] == ["untrusted"]  # another tool's hook stays for review
    assert os.path.realpath(str(driver.root / "hooks.json")) in ours[0]["key"]


def test_hooks_installed_after_the_session_started_check_the_agents_own_log(
        fresh: Callable[[], Driver], tmp_path: Path) -> None:
    """`fresh` agent: a session run without hooks; hooks installed; a branch switch; a resume."""
    driver = fresh()
    driver.run("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
    store = tmp_path / "store"
    assert _baseline_of(driver, store) == "log"  # what the session view shows: reconstructed
    _sk("hooks", "install", "--agent", driver.agent, "--config-dir", str(driver.root),
        "--store", str(store))
    git(driver.repo, "checkout", "-q", "-b", "later")
    seen = len(driver.fake.requests)
    driver.run("Go on.\nRUN: echo again > c.txt && echo wrote-c", resume=True)
    sent = _requests_after(driver, seen)
    assert f"branch: {BRANCH} → later" in sent
    assert "reconstructed from the agent's log" in sent
    journal = Keeper(store, read_only=True).read_journal(driver.agent, str(driver.session_id))
    assert journal is not None  # the journal starts with this resume: exact from here on
    assert journal.state.summaries()["operations"]["committed"] == 1
    assert _baseline_of(driver, store) == "hook"


def _baseline_of(driver: Driver, store: Path) -> str | None:
    """ThreadSummary.baseline of the driver's session as a listing shows it."""
    sources = AgentSources(agents=(driver.agent,), roots={driver.agent: (str(driver.root),)})
    rows = Keeper(store, agents=sources).threads()
    [row] = [r for r in rows if r.thread_id == driver.session_id]
    return row.baseline


def test_a_failing_command_is_finished_in_the_ledger_never_in_doubt(
        hooked: tuple[Driver, Path]) -> None:
    """`hooked`: the model's shell call exits 3 (Claude reports it in PostToolUseFailure)."""
    driver, store = hooked
    driver.run("Fail please.\nRUN: echo oops && exit 3")
    ledger = Keeper(store, read_only=True).read_journal(driver.agent, str(driver.session_id))
    assert ledger is not None
    [call] = driver.fake.calls
    entry = ledger.state.summaries()["operations"]
    assert entry["in_doubt"] == 0 and entry["in_doubt_operations"] == []
    statuses = [r["status"] for rollout in Keeper(store, read_only=True).journal_rollouts(
        driver.agent, str(driver.session_id)) for r in rollout.records
        if r["type"] == "operation" and r["operation_id"] == call]
    assert statuses == ["started", "failed" if driver.agent == "claude" else "committed"]
