"""The hooks' command line as real processes: install/status --json for the editor, the policy,
ack, and a hook that never breaks the agent (time limit, internal errors: exit 0, one line)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sessionkeeper.hooks.state import gate_of, runs_of
from tests.unit._hooks import SID, payload, run

SK = str(Path(sys.executable).parent / "sessionkeeper")


def _sk(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([SK, *args], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={**os.environ, **(env or {})})
    assert done.returncode == code, (done.stdout, done.stderr)
    return done


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """A throwaway HOME with both agents' config homes and an empty git config."""
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".gitconfig").write_text("")
    return {"HOME": str(tmp_path / "home"), "GIT_CONFIG_GLOBAL": str(tmp_path / "home" / ".gitconfig"),
            "CLAUDE_CONFIG_DIR": str(tmp_path / "claudecfg"), "CODEX_HOME": str(tmp_path / "codexhome"),
            "SESSIONKEEPER_HOME": str(tmp_path / "store")}


def test_install_and_status_json_give_the_editor_every_agent_it_connects(home: dict[str, str]) -> None:
    """Fixture: `home` where only Codex's home exists ("all" connects the agents found)."""
    Path(home["CODEX_HOME"]).mkdir()
    out: dict[str, Any] = json.loads(_sk("hooks", "install", "--json", env=home).stdout)
    assert [a["agent"] for a in out["agents"]] == ["codex"]
    [codex] = out["agents"]
    assert codex["changed"] == [f"{home['CODEX_HOME']}/hooks.json", f"{home['CODEX_HOME']}/config.toml"]
    assert codex["status"]["installed"] is True and codex["status"]["trusted"] is True
    assert codex["backup"] and Path(codex["backup"]).is_relative_to(home["SESSIONKEEPER_HOME"])
    status: dict[str, Any] = json.loads(_sk("hooks", "status", "--json", env=home).stdout)
    by_agent = {a["agent"]: a for a in status["agents"]}
    assert set(by_agent) == {"claude", "codex"}
    assert by_agent["claude"]["installed"] is False and by_agent["claude"]["found"] is False
    assert by_agent["codex"]["events"] == {e: "installed" for e in (
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "PostCompact")}
    for key in ("found", "installed", "trusted", "trust", "last_run", "last_failure", "calls",
                "hooks_file", "config_dir", "commands", "notes", "backup", "scope"):
        assert key in by_agent["codex"]
    text = _sk("hooks", "status", env=home).stdout
    assert "codex (user): installed" in text and "trusted: yes" in text and "last ran: never" in text
    _sk("hooks", "uninstall", "--agent", "codex", env=home)
    assert sorted(os.listdir(home["CODEX_HOME"])) == []


def test_the_policy_is_set_per_repository_and_per_user_through_git_config(
        home: dict[str, str], repo: Path) -> None:
    """Fixture: `home` (an empty ~/.gitconfig) and `repo`."""
    shown = json.loads(_sk("hooks", "policy", "--json", cwd=repo, env=home).stdout)
    assert (shown["policy"], shown["source"]) == ("warn", "default")
    _sk("hooks", "policy", "off", "--user", env=home)
    assert "hookPolicy = off" in Path(home["GIT_CONFIG_GLOBAL"]).read_text()
    _sk("hooks", "policy", "block-on-drift", "--repo", str(repo), env=home)
    shown = json.loads(_sk("hooks", "policy", "--json", "--repo", str(repo), env=home).stdout)
    assert shown["policy"] == "block-on-drift"
    elsewhere = json.loads(_sk("hooks", "policy", "--json", cwd=Path(home["HOME"]), env=home).stdout)
    assert elsewhere["policy"] == "off"
    done = _sk("hooks", "policy", "off", env=home, code=64)
    assert "--repo DIR" in done.stderr


def test_hooks_ack_lifts_a_gate_from_the_command_line(home: dict[str, str], repo: Path,
                                                      tmp_path: Path) -> None:
    """Fixture: `repo`; a real Claude start hook there, a resume hook from another directory."""
    store = Path(home["SESSIONKEEPER_HOME"])
    start = json.dumps(payload("claude", "SessionStart", repo, source="startup"))
    assert run("claude", "SessionStart", start, store, env=home).returncode == 0
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    resume = json.dumps(payload("claude", "SessionStart", elsewhere, source="resume"))
    answer = run("claude", "SessionStart", resume, store, env=home)
    assert "must not continue here" in answer.stdout and gate_of(store, "claude", SID) is not None
    done = _sk("hooks", "ack", "claude", SID, env=home)
    assert "the gate is lifted" in done.stdout and gate_of(store, "claude", SID) is None
    _sk("hooks", "ack", "claude", "not-a-uuid", env=home, code=65)


def _slow_git(tmp_path: Path) -> str:
    """A PATH whose `git` hangs for 30 s (a repository on a dead network mount, say)."""
    bin_dir = tmp_path / "slowbin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return f"{bin_dir}:{os.environ['PATH']}"


def test_a_hook_past_its_time_limit_fails_open_with_one_line(home: dict[str, str], repo: Path,
                                                             tmp_path: Path) -> None:
    """Fixture: `repo`; git hangs; the hook's limit lowered to 1 s (SESSIONKEEPER_HOOK_BUDGET_S)."""
    store = Path(home["SESSIONKEEPER_HOME"])
    env = {**home, "PATH": _slow_git(tmp_path), "SESSIONKEEPER_HOOK_BUDGET_S": "1"}
    started = time.monotonic()
    done = run("claude", "SessionStart", json.dumps(payload("claude", "SessionStart", repo,
                                                             source="startup")), store, env=env)
    took = time.monotonic() - started
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "gave up after 1 s (failed open" in done.stderr
    assert took < 20  # ended by its own watchdog, not by the 30 s git
    assert runs_of(store, "claude")["last_failure"]["note"].startswith("sessionkeeper hook claude")


@pytest.mark.parametrize("tool", ["Edit", "Bash"])
def test_a_tool_hook_past_its_time_limit_fails_open_and_says_so_in_hooks_status(
        home: dict[str, str], repo: Path, tmp_path: Path, tool: str) -> None:
    """Fixture: `repo`, a session started; then git hangs (the policy's `git config`, and the
    changed files after a Bash call) and the limit is lowered to 1 s: the thin process ends
    itself, with one line, and `hooks status` shows the failure."""
    store = Path(home["SESSIONKEEPER_HOME"])
    started = run("claude", "SessionStart", json.dumps(payload("claude", "SessionStart", repo,
                                                               source="startup")), store, env=home)
    assert started.returncode == 0
    env = {**home, "PATH": _slow_git(tmp_path), "SESSIONKEEPER_HOOK_BUDGET_S": "1"}
    tool_input = {"file_path": str(repo / "payment.py")} if tool == "Edit" else {"command": "ls"}
    begun = time.monotonic()
    done = run("claude", "PostToolUse", json.dumps(payload(
        "claude", "PostToolUse", repo, tool_name=tool, tool_input=tool_input,
        tool_use_id="toolu_slow", tool_response={})), store, env=env)
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "gave up after 1 s (failed open" in done.stderr
    assert time.monotonic() - begun < 20  # its own alarm, not the 30 s git
    failure = runs_of(store, "claude")["last_failure"]
    assert failure["event"] == "PostToolUse" and "gave up after 1 s" in failure["note"]


def test_an_internal_error_fails_open_with_one_line_and_no_traceback(home: dict[str, str],
                                                                     repo: Path,
                                                                     tmp_path: Path) -> None:
    """Fixture: `repo`; the store path is a file, so nothing can be recorded there."""
    store = tmp_path / "not-a-dir"
    store.write_text("x")
    done = run("codex", "PreToolUse", json.dumps(payload(
        "codex", "PreToolUse", repo, tool_name="Bash", tool_input={}, tool_use_id="call_1")), store,
        env={**home, "SESSIONKEEPER_HOME": str(store)})
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "failed open" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_real_resume_hook_answers_json_the_agent_reads(home: dict[str, str], repo: Path) -> None:
    """Fixture: `repo`; real start and resume hook processes for Codex."""
    store = Path(home["SESSIONKEEPER_HOME"])
    for source in ("startup", "resume"):
        done = run("codex", "SessionStart", json.dumps(payload("codex", "SessionStart", repo,
                                                                source=source)), store, env=home)
        assert done.returncode == 0 and done.stderr == ""
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "nothing changed since it last ran" in answer["hookSpecificOutput"]["additionalContext"]


_AUDITED = """
import json, runpy, sys
OUT = sys.argv[1]
seen = []
def audit(event, args):
    if event.startswith(("socket.", "urllib.", "http.")) or event in ("ssl.wrap_socket",):
        seen.append(event)
sys.addaudithook(audit)
sys.argv = ["sessionkeeper", *sys.argv[2:]]  # python -c CODE OUT hook ...
try:
    runpy.run_module("sessionkeeper", run_name="__main__")
except SystemExit:
    pass
with open(OUT, "w") as handle:
    json.dump(seen, handle)
"""


def test_no_hook_ever_opens_a_network_connection(home: dict[str, str], repo: Path,
                                                 tmp_path: Path) -> None:
    """Fixture: `repo`; every event of a session as real processes, with a Python audit hook
    recording every socket, urllib and http event they raise."""
    store = Path(home["SESSIONKEEPER_HOME"])
    calls: list[tuple[str, dict[str, Any]]] = [("SessionStart", {"source": "startup"}),
             ("UserPromptSubmit", {"prompt": "hi"}),
             ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"},
                             "tool_use_id": "call_n1"}),
             ("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"},
                              "tool_use_id": "call_n1", "tool_response": "x"}),
             ("PreCompact", {"trigger": "auto"}), ("PostCompact", {"trigger": "auto"}),
             ("SessionStart", {"source": "resume"})]
    for n, (event, fields) in enumerate(calls):
        out = tmp_path / f"audit-{n}.json"
        done = subprocess.run([sys.executable, "-c", _AUDITED, str(out), "hook", "--store",
                               str(store), "codex", event],
                              input=json.dumps(payload("codex", event, repo, **fields)).encode(),
                              capture_output=True, timeout=120, env={**os.environ, **home})
        assert done.returncode == 0 and b"failed open" not in done.stderr, done.stderr
        assert json.loads(out.read_text()) == [], event
    assert "nothing changed" in done.stdout.decode()


_MODULES = """
import json, runpy, sys
OUT = sys.argv[1]
sys.argv = ["sessionkeeper", *sys.argv[2:]]
try:
    runpy.run_module("sessionkeeper", run_name="__main__")
except SystemExit:
    pass
with open(OUT, "w") as handle:
    json.dump(sorted(sys.modules), handle)
"""


def test_a_resume_the_digest_proves_loads_no_keeper_and_makes_no_id(
        home: dict[str, str], repo: Path, tmp_path: Path) -> None:
    """Fixture: `repo`; a real start, a full resume check (it leaves the digest), then the
    resume the digest proves, in a process that lists the modules it loaded."""
    store = Path(home["SESSIONKEEPER_HOME"])
    for source in ("startup", "resume"):
        run("codex", "SessionStart", json.dumps(payload("codex", "SessionStart", repo,
                                                        source=source)), store, env=home)
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", _MODULES, str(out), "hook", "--store",
                           str(store), "codex", "SessionStart"],
                          input=json.dumps(payload("codex", "SessionStart", repo,
                                                   source="resume")).encode(),
                          capture_output=True, timeout=120, env={**os.environ, **home})
    assert b"nothing changed since it last ran" in done.stdout, done.stderr
    modules = set(json.loads(out.read_text()))
    assert {"sessionkeeper.hooks.digest", "sessionkeeper.hooks.policy"} <= modules
    assert modules & {"uuid", "datetime", "sessionkeeper.api", "pydantic"} == set()


def _strict(data: bytes) -> Any:
    """JSON as the agents read it: no NaN or Infinity, no number that overflows a double."""
    def refuse(text: str) -> float:
        raise ValueError(f"not JSON: {text}")

    def double(text: str) -> float:
        value = float(text)
        return value if value not in (float("inf"), float("-inf")) else refuse(text)

    return json.loads(data, parse_constant=refuse, parse_float=double)


@pytest.mark.parametrize("settings,problem", [
    (b'{"cleanupPeriodDays": 1e999}', "1e999"), (b'{"x": NaN}', "NaN"),
    (b'{"x": [-Infinity]}', "-Infinity"), (b'{"x": "\\ud800"}', "surrogate")])
def test_a_claude_settings_file_that_would_not_be_written_back_as_json_is_refused_untouched(
        settings: bytes, problem: str, home: dict[str, str]) -> None:
    """Fixture: `home`; a settings.json with a value Python's json reads but cannot write back as
    JSON (an overflowing number, NaN / Infinity literals, a lone surrogate escape)."""
    path = Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir()
    path.write_bytes(settings)
    done = _sk("hooks", "install", "--agent", "claude", env=home, code=65)
    assert "agent_config_invalid" in done.stderr and str(path) in done.stderr, done.stderr
    assert problem in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert path.read_bytes() == settings
    installs = Path(home["SESSIONKEEPER_HOME"]) / "hooks" / "installs"
    assert [p.name for p in installs.iterdir() if not p.name.endswith(".lock")] == []  # no backup


def test_claude_settings_with_big_and_small_numbers_are_written_back_as_the_same_json(
        home: dict[str, str]) -> None:
    """Fixture: `home`; a settings.json with a large double and an integer beyond 64 bits."""
    path = Path(home["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b'{"n": 1e300, "tiny": 5e-324, "big": 123456789012345678901234567890}')
    _sk("hooks", "install", "--agent", "claude", env=home)
    written = _strict(path.read_bytes())
    assert (written["n"], written["tiny"], written["big"]) == (1e300, 5e-324,
                                                               123456789012345678901234567890)
    assert set(written["hooks"]) >= {"SessionStart", "PreToolUse"}
