"""The real Codex CLI and Claude Code start `sessionkeeper mcp`, registered by `sessionkeeper hooks
install`, and the model's calls of its tools are answered from the session's own journal (never
skipped; offline, our fake model servers on 127.0.0.1 script the model's tool calls with `CALL:`).

A branch switch the agent makes mid-turn is named by `drift_since`; a tool call cut by kill -9 is
named by `in_doubt_operations` after the resume; the tools are in what the agents offer the
model; the agents' homes hold only what install wrote, and uninstall puts them back byte for byte.

The agents' own knobs for a server still starting are set here as a user of their headless modes
would (Codex `mcp_optional_startup_grace_ms = 0`, Claude Code `CLAUDE_CODE_MCP_STARTUP_WAIT_MS`):
both start their MCP servers alongside the first model request and add their tools once they
answer, and the SDK's import alone takes about a second.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sessionkeeper.api import Keeper
from tests.conftest import git
from tests.e2e.agents.drive import BRANCH, Driver
from tests.e2e.agents.fake_models import strings as _strings
from tests.e2e.agents.test_hooks_real_agents import THEIRS, _sk

pytestmark = pytest.mark.timeout(900)


def _tree(*roots: Path) -> dict[str, str]:
    """{path: sha256} of every file under `roots` (what a home holds)."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for root in roots
            for p in sorted(root.rglob("*")) if p.is_file()}


def _theirs(driver: Driver) -> None:
    """The agent's config as a user has it: another tool's hook, an MCP server of their own."""
    if driver.agent == "codex":
        config = driver.root / "config.toml"
        config.write_text("mcp_optional_startup_grace_ms = 0\n" + config.read_text()
                          + '\n[mcp_servers.theirs]\ncommand = "/bin/false"\nenabled = false\n')
        (driver.root / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [THEIRS]}}, indent=2))
    else:
        (driver.root / "settings.json").write_text(json.dumps({"hooks": {"Stop": [THEIRS]}}, indent=4))
        (driver.root / ".claude.json").write_text(json.dumps(
            {"mcpServers": {"theirs": {"type": "stdio", "command": "/bin/false", "args": []}}}, indent=2))
        driver.extra_env["CLAUDE_CODE_MCP_STARTUP_WAIT_MS"] = "60000"
        driver.allowed_tools = ["Bash", "mcp__sessionkeeper"]


@pytest.fixture
def asking(fresh: Callable[[], Driver], tmp_path: Path) -> Iterator[tuple[Driver, Path]]:
    """`fresh` agent with a config of its own; our hooks and MCP server installed by the CLI."""
    driver = fresh()
    _theirs(driver)
    store = tmp_path / "store"
    [entry] = _sk("hooks", "install", "--agent", driver.agent, "--config-dir", str(driver.root),
                  "--store", str(store))["agents"]
    assert entry["status"]["installed"] is True and entry["status"]["mcp"]["registered"] is True
    yield driver, store


def _results_of(driver: Driver, call: str) -> str:
    """The result of tool call `call` as the agent sent it back to the model (its text)."""
    found: list[str] = []
    for request in driver.fake.requests:
        body = request["body"] or {}
        for message in body.get("messages") or []:  # Anthropic: tool_result blocks
            for block in message.get("content") or [] if isinstance(message, dict) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result" \
                        and block.get("tool_use_id") == call:
                    found.append("\n".join(_strings(block.get("content"))))
        for item in body.get("input") or [] if isinstance(body.get("input"), list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output" \
                    and item.get("call_id") == call:  # OpenAI Responses
                found.append("\n".join(_strings(item.get("output"))))
    assert found, f"no result of tool call {call} reached the model"
    return found[-1]


def _our_tools_offered(driver: Driver) -> set[str]:
    """The tools of our server the agent offered the model (Claude lists them as deferred)."""
    names: set[str] = set()
    for request in driver.fake.requests:
        body = request["body"] or {}
        for tool in body.get("tools") or []:
            if tool.get("type") == "namespace" and tool.get("name") == "mcp__sessionkeeper":
                names |= {t["name"] for t in tool.get("tools") or []}
            elif str(tool.get("name", "")).startswith("mcp__sessionkeeper__"):
                names.add(tool["name"].removeprefix("mcp__sessionkeeper__"))
        text = json.dumps(body)
        names |= {n for n in ("drift_since", "in_doubt_operations", "file_history", "diff",
                              "rewind_preview", "rewind", "todos", "verifier")
                  if f"mcp__sessionkeeper__{n}" in text}
    return names


def test_drift_since_names_a_branch_switch_the_agent_made_in_the_turn(
        asking: tuple[Driver, Path]) -> None:
    """`asking`: one prompt whose model switches the branch, then asks drift_since."""
    driver, store = asking
    driver.run("Switch, then check.\nRUN: git checkout -q -b mcp-elsewhere && echo switched\n"
               'CALL: drift_since {"since": "last_turn"}')
    assert git(driver.repo, "rev-parse", "--abbrev-ref", "HEAD") == "mcp-elsewhere"
    assert {"drift_since", "in_doubt_operations", "rewind"} <= _our_tools_offered(driver)
    shell, asked = driver.fake.calls[-2:]
    sent = _results_of(driver, asked)
    assert f"branch: {BRANCH} → mcp-elsewhere (by the agent: tool call {shell}" in sent
    assert "the start of the current turn" in sent
    journal = Keeper(store, read_only=True).read_journal(driver.agent, str(driver.session_id))
    assert journal is not None  # the server answered from the session's own journal


def test_in_doubt_operations_names_a_tool_call_cut_by_kill_9(asking: tuple[Driver, Path]) -> None:
    """`asking`: a session killed -9 inside its shell call (once the hook recorded its start and
    the agent logged the call), then resumed with a prompt whose model asks in_doubt_operations."""
    driver, store = asking

    def started(call: str) -> bool:  # the hook recorded it, and the agent's own log holds it
        if not driver._logged(call):  # (a fast hook can finish before the agent writes its log)
            return False
        keeper = Keeper(store, read_only=True)
        return any(r.get("operation_id") == call and r.get("status") == "started"
                   for agent_sid in _journal_ids(store, driver.agent)
                   for rollout in keeper.journal_rollouts(driver.agent, agent_sid)
                   for r in rollout.records)

    cut = driver.crash_inside_a_tool_call("timeout 300 tail -f /dev/null && echo never",
                                          ready=started)
    driver.session_id = driver.session_of_transcript()
    driver.run("What was cut off?\nCALL: in_doubt_operations", resume=True)
    asked = driver.fake.calls[-1]
    sent = _results_of(driver, asked)
    assert f'"operation_id":"{cut}"' in sent and "never finished" in sent
    assert "timeout 300 tail -f /dev/null && echo never" in sent  # its arguments, to check


def _journal_ids(store: Path, agent: str) -> list[str]:
    root = store / "journals" / agent
    if not root.is_dir():
        return []
    return [row.thread_id for row in Keeper(store, read_only=True).journal_keeper(agent).rows()]


def test_the_homes_hold_only_what_install_wrote_and_uninstall_restores_them(
        fresh: Callable[[], Driver], tmp_path: Path) -> None:
    """`fresh` agent with a config of its own: the homes before and after install, a session in
    which the model asks our server, then uninstall."""
    driver = fresh()
    _theirs(driver)
    before = _tree(driver.home, driver.root)
    store = tmp_path / "store"
    args = ["--agent", driver.agent, "--config-dir", str(driver.root), "--store", str(store)]
    [entry] = _sk("hooks", "install", *args)["agents"]
    after = _tree(driver.home, driver.root)
    assert {p for p in after if after[p] != before.get(p)} == set(entry["changed"])
    mcp_file = Path(entry["status"]["mcp"]["file"])
    assert str(mcp_file) in entry["changed"]
    assert f"mcp --agent {driver.agent} --store {store}" in entry["status"]["mcp"]["command"]
    [back] = _sk("hooks", "uninstall", *args)["agents"]
    assert _tree(driver.home, driver.root) == before, back  # byte for byte, nobody wrote meanwhile
    _sk("hooks", "install", *args)
    driver.run('Ask.\nCALL: todos')
    assert "no todo list recorded" in _results_of(driver, driver.fake.calls[-1])
    _sk("hooks", "uninstall", *args)
    status = _sk("hooks", "status", *args)["agents"][0]
    assert status["installed"] is False and status["mcp"]["registered"] is False
    servers = _servers(driver.agent, mcp_file)
    assert "theirs" in servers and "sessionkeeper" not in servers  # the agent's own writes stay


def _servers(agent: str, path: Path) -> dict[str, Any]:
    """The MCP servers an agent's config file names."""
    if agent == "claude":
        return dict(json.loads(path.read_bytes()).get("mcpServers") or {})
    import tomlkit

    return dict(tomlkit.parse(path.read_text()).unwrap().get("mcp_servers") or {})
