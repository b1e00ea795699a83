"""The real OpenClaw (pinned, from npm, with npm's Node 24) through `sessionkeeper` (never skipped).

OpenClaw runs `openclaw agent --local` turns against our fake Anthropic server on 127.0.0.1 in a
throwaway HOME whose `.openclaw` holds only its config; its workspace is a real repository on
feature/sk-test. The session it creates is listed, checked in place, cut after its tool call (in
doubt), checked after a checkout (drift) and resumed through the command `sessionkeeper resume`
gives (run for real: the same session grows) — with a digest of the whole state dir after every
read command. Then Session Keeper's OpenClaw plugin inside OpenClaw's own turns.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import git, init_repo
from tests.e2e.agents.drive import BRANCH, install
from tests.e2e.agents.fake_models import FakeModel
from tests.unit._agents import tree_digest

pytestmark = pytest.mark.timeout(900)
TURN_TIMEOUT = 240


class OpenClaw:
    """One OpenClaw state dir, one workspace repository, one fake model server."""

    def __init__(self, exe: Path, scratch: Path, fake: FakeModel) -> None:
        self.exe, self.fake = exe, fake
        self.home = scratch / "home"
        self.state = self.home / ".openclaw"
        self.repo = scratch / "repo"
        self.state.mkdir(parents=True)
        init_repo(self.repo, {"README": "base\n"}, message="init")
        git(self.repo, "checkout", "-q", "-b", BRANCH)
        model = {"id": "claude-fake", "name": "Fake", "reasoning": False, "input": ["text"],
                 "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                 "contextWindow": 200000, "maxTokens": 8192}
        config = {"models": {"mode": "replace", "providers": {"fake": {
            "baseUrl": f"http://127.0.0.1:{fake.port}", "apiKey": "sk-fake",
            "api": "anthropic-messages", "models": [model]}}},
            "agents": {"defaults": {"model": {"primary": "fake/claude-fake"},
                                    "workspace": str(self.repo)}}}
        (self.state / "openclaw.json").write_bytes(orjson.dumps(config))
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("OPENCLAW_", "ANTHROPIC_", "OPENAI_"))}
        self.env.update(HOME=str(self.home), NO_COLOR="1")

    def turn(self, prompt: str, *, argv: list[str] | None = None, ok: bool = True) -> dict[str, Any]:
        """One turn (a new session, or `argv` with the prompt on stdin); its JSON result
        (`ok`: it must succeed; else it must fail, as a turn a plugin stopped does)."""
        args = [str(self.exe), "agent", "--local", "--agent", "main", "--message", prompt] \
            if argv is None else [str(self.exe), *argv[1:]]
        done = subprocess.run([*args, "--json"], cwd=self.repo, env=self.env, capture_output=True,
                              text=True, timeout=TURN_TIMEOUT, input=prompt if argv else None)
        assert (done.returncode == 0) is ok, done.stderr[-3000:]
        result: dict[str, Any] = orjson.loads(done.stdout) if done.stdout.strip() else {}
        result["stderr"] = done.stderr
        return result

    def sk(self, *args: str, state: Path | None = None, data: Path) -> Any:
        """`sessionkeeper ... --json` reading only this state dir; it must be unchanged after."""
        where = state or self.state
        before = tree_digest(where)
        env = {k: v for k, v in os.environ.items() if k != "SESSIONKEEPER_HOME"}
        done = subprocess.run([sys.executable, "-m", "sessionkeeper", *args, "--json",
                               "--openclaw-home", str(where), "--agents", "openclaw"],
                              capture_output=True, text=True, timeout=120,
                              env={**env, "XDG_DATA_HOME": str(data), "NO_COLOR": "1"})
        assert tree_digest(where) == before, f"{args} changed the OpenClaw state dir"
        assert done.returncode in (0, 10, 11), done.stderr
        return orjson.loads(done.stdout)


@pytest.fixture(scope="module")
def openclaw_exe() -> Path:
    """OpenClaw installed (or reused) by install.sh: fails loudly, never skips."""
    return install("openclaw")


@pytest.fixture
def claw(openclaw_exe: Path, tmp_path: Path) -> Iterator[OpenClaw]:
    """A fresh state dir and repository, with the fake Anthropic server up."""
    with FakeModel("anthropic") as fake:
        yield OpenClaw(openclaw_exe, tmp_path, fake)


def test_a_real_openclaw_session_is_listed_checked_drifts_and_resumes_through_openclaw(
        claw: OpenClaw, tmp_path: Path) -> None:
    """`claw`: OpenClaw's own session with one exec call, in a repository on feature/sk-test."""
    first = claw.turn("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")
    session = first["meta"]["agentMeta"]["sessionId"]
    assert (claw.repo / "a.txt").read_text() == "hi\n"
    data = tmp_path / "xdg"
    _cut_after_the_call_is_in_doubt(claw, session, tmp_path)
    [row] = claw.sk("list", data=data)
    assert (row["thread_id"], row["agent"], row["branch"]) == (session, "openclaw", BRANCH)
    assert row["cwd"] == os.path.realpath(claw.repo)
    ok = claw.sk("--check-resume", session, "--workspace", str(claw.repo), data=data)
    assert (ok["verdict"], ok["agent"], ok["differences"]) == ("ok", "openclaw", [])
    assert ok["facts"]["git"]["origin"] == "index" and ok["facts"]["git"]["exact"] is False
    git(claw.repo, "add", "a.txt")
    git(claw.repo, "commit", "-qm", "a")
    git(claw.repo, "checkout", "-q", "-b", "drifted")
    drift = claw.sk("--check-resume", session, "--workspace", str(claw.repo), data=data)
    assert drift["verdict"] == "drift"
    assert [(d["kind"], d["recorded"], d["current"]) for d in drift["differences"]
            if d["kind"] == "branch"] == [("branch", BRANCH, "drifted")]
    git(claw.repo, "checkout", "-q", BRANCH)
    resumed = claw.sk("resume", session, "--workspace", str(claw.repo), data=data)
    argv = resumed["command"]["argv"]
    assert argv == ["openclaw", "agent", "--local", "--agent", "main", "--session-id", session,
                    "--message-file", "/dev/stdin"]
    second = claw.turn("RUN: echo resumed-ok", argv=argv)
    assert second["meta"]["agentMeta"]["sessionId"] == session
    [after] = claw.sk("list", data=data)
    assert after["thread_id"] == session and after["event_count"] > row["event_count"]
    report = claw.sk("--check-resume", session, "--workspace", str(claw.repo), data=data)
    assert report["subsystems"]["operations"]["summary"]["committed"] == 2, report["subsystems"]


def _cut_after_the_call_is_in_doubt(claw: OpenClaw, session: str, tmp_path: Path) -> None:
    """A copy of the state dir with every event after the tool call deleted: the call is in doubt."""
    [call] = claw.fake.calls
    copy = Path(shutil.copytree(claw.state, tmp_path / "cut"))
    with sqlite3.connect(copy / "agents/main/agent/openclaw-agent.sqlite") as db:
        [cut] = db.execute("SELECT seq FROM transcript_events WHERE session_id = ? AND "
                           "event_json LIKE ?", (session, f'%"toolCall","id":"{call}"%')).fetchone()
        db.execute("DELETE FROM transcript_events WHERE session_id = ? AND seq > ?", (session, cut))
    db.close()
    report = claw.sk("--check-resume", session, "--workspace", str(claw.repo), state=copy,
                     data=tmp_path / "xdg-cut")
    assert [o["operation_id"] for o in report["in_doubt_operations"]] == [call]


def _with_plugin(claw: OpenClaw, data: Path, *, workspace: Path | None = None,
                 command: list[str] | None = None) -> None:
    """The state dir's config with Session Keeper's OpenClaw plugin loaded (it runs this
    checkout's sessionkeeper, or `command`, on the per-user store under `data`)."""
    from sessionkeeper.integrations.openclaw import plugin_config

    config = orjson.loads((claw.state / "openclaw.json").read_bytes())
    config["plugins"] = plugin_config(command or [sys.executable, "-m", "sessionkeeper"],
                                      timeout_ms=20000)
    if workspace is not None:
        config["agents"]["defaults"]["workspace"] = str(workspace)
    (claw.state / "openclaw.json").write_bytes(orjson.dumps(config))
    claw.env.update(XDG_DATA_HOME=str(data), PYTHONPATH=os.pathsep.join(sys.path))


def _prompts(fake: FakeModel) -> str:
    return "\n".join(orjson.dumps(r["body"]).decode() for r in fake.requests if r["method"] == "POST")


def test_inside_openclaw_the_plugin_tells_the_model_of_drift_and_stops_another_repository(
        claw: OpenClaw, tmp_path: Path) -> None:
    """`claw` with Session Keeper's plugin loaded: a first turn with the plugin's sessionkeeper
    missing (it fails open), a resume on feature/sk-test (nothing to tell), one after a checkout
    (the model is told), then one with the agent's workspace set to another repository (the turn
    is stopped before any model request)."""
    data = tmp_path / "xdg"
    _with_plugin(claw, data, command=[str(tmp_path / "no-such-sessionkeeper")])
    first = claw.turn("Create a file please.\nRUN: echo hi > a.txt && echo wrote-a")  # fails open
    session = first["meta"]["agentMeta"]["sessionId"]
    _with_plugin(claw, data)
    argv = ["openclaw", "agent", "--local", "--agent", "main", "--session-id", session,
            "--message-file", "/dev/stdin"]
    claw.turn("RUN: echo same-place", argv=argv)  # the plugin's check imports it here
    assert "Session Keeper" not in _prompts(claw.fake)
    git(claw.repo, "checkout", "-q", "-b", "drifted")
    claw.turn("RUN: echo after-drift", argv=argv)
    told = _prompts(claw.fake)
    assert "Session Keeper: the workspace changed" in told and "now drifted" in told
    other = tmp_path / "other"
    init_repo(other, {"OTHER": "x\n"}, message="other root")
    _with_plugin(claw, data, workspace=other)
    asked = len(claw.fake.requests)
    stopped = claw.turn("RUN: echo in-the-wrong-repo", argv=argv, ok=False)
    assert len(claw.fake.requests) == asked, "the model was asked despite another repository"
    assert "before_agent_run hook blocked by sessionkeeper" in stopped["stderr"]
    assert "Session Keeper stopped this resume" in orjson.dumps(stopped).decode()
