"""`hooks install` with `mcp`: our MCP server registered in the agents' own MCP config (Claude
Code's .claude.json or a project's .mcp.json, Codex's config.toml), merged, idempotent, backed up,
restored byte for byte — on real files in throwaway config dirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomlkit

from sessionkeeper.errors import AgentConfigInvalid
from sessionkeeper.hooks.install import Target, install, status, target, uninstall
from sessionkeeper.hooks.mcp_config import is_ours

PROGRAM = ["/opt/sk/bin/sessionkeeper"]
CLAUDE_STATE = (b'{\n  "numStartups": 3,\n  "mcpServers": {\n    "theirs": {\n      "type": "stdio",\n'
                b'      "command": "their-server",\n      "args": []\n    }\n  },\n'
                b'  "projects": {}\n}\n')
CODEX_CONFIG = (b'# my codex\nmodel = "gpt-5"  # keep\n\n[mcp_servers.theirs]\ncommand = "their-server"\n')


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _claude(tmp_path: Path) -> Target:
    home = tmp_path / "claudecfg"
    home.mkdir()
    (home / ".claude.json").write_bytes(CLAUDE_STATE)
    return target("claude", config_dir=str(home))


def _codex(tmp_path: Path) -> Target:
    home = tmp_path / "codexhome"
    home.mkdir()
    (home / "config.toml").write_bytes(CODEX_CONFIG)
    return target("codex", config_dir=str(home))


def _servers(where: Target) -> dict[str, object]:
    data = where.mcp_file.read_bytes()
    if where.agent == "claude":
        return dict(json.loads(data)["mcpServers"])
    return dict(tomlkit.parse(data.decode()).unwrap()["mcp_servers"])


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_install_registers_our_server_beside_theirs_and_uninstall_restores_byte_for_byte(
        tmp_path: Path, store_dir: Path, agent: str) -> None:
    """Fixture: the agent's MCP config with a server of the user's own (and Claude's state)."""
    where = _claude(tmp_path) if agent == "claude" else _codex(tmp_path)
    before = _tree(where.home)
    done = install(where, store_root=store_dir, program=PROGRAM, store="/data/sk", mcp=True)
    assert str(where.mcp_file) in done.changed
    servers = _servers(where)
    assert servers["theirs"]["command"] == "their-server"  # type: ignore[index]
    ours = servers["sessionkeeper"]
    assert is_ours(ours)
    assert [ours["command"], *ours["args"]] == [  # type: ignore[index]
        *PROGRAM, "mcp", "--agent", agent, "--store", "/data/sk"]
    if agent == "claude":
        assert json.loads(where.mcp_file.read_bytes())["numStartups"] == 3
    else:
        assert where.mcp_file.read_text().startswith('# my codex\nmodel = "gpt-5"  # keep\n')
    again = install(where, store_root=store_dir, program=PROGRAM, store="/data/sk", mcp=True)
    assert again.changed == [] and any("already registered" in line for line in again.done)
    assert status(where, store_root=store_dir)["mcp"]["registered"] is True
    uninstall(where, store_root=store_dir)
    assert _tree(where.home) == before


def test_a_file_the_agent_changed_since_keeps_its_changes_and_loses_only_our_server(
        tmp_path: Path, store_dir: Path) -> None:
    """Fixture: Claude Code's .claude.json; after the install Claude writes its own state there."""
    where = _claude(tmp_path)
    install(where, store_root=store_dir, program=PROGRAM, mcp=True)
    state = json.loads(where.mcp_file.read_bytes())
    state["numStartups"] = 4
    where.mcp_file.write_text(json.dumps(state, indent=2) + "\n")
    uninstall(where, store_root=store_dir)
    after = json.loads(where.mcp_file.read_bytes())
    assert after["numStartups"] == 4 and list(after["mcpServers"]) == ["theirs"]


def test_a_server_of_that_name_that_is_not_ours_is_left_and_nothing_is_written(
        tmp_path: Path, store_dir: Path) -> None:
    """Fixture: a .claude.json whose `sessionkeeper` server runs something else."""
    where = _claude(tmp_path)
    where.mcp_file.write_text(json.dumps({"mcpServers": {"sessionkeeper": {
        "type": "stdio", "command": "/usr/bin/other", "args": ["serve"]}}}))
    before = _tree(where.home)
    with pytest.raises(AgentConfigInvalid, match="does not run `sessionkeeper mcp`"):
        install(where, store_root=store_dir, program=PROGRAM, mcp=True)
    assert _tree(where.home) == before and not where.hooks_file.exists()


def test_without_mcp_nothing_is_registered(tmp_path: Path, store_dir: Path) -> None:
    """Fixture: Claude Code's .claude.json; install with mcp off (the CLI's --no-mcp)."""
    where = _claude(tmp_path)
    install(where, store_root=store_dir, program=PROGRAM, mcp=False)
    assert where.mcp_file.read_bytes() == CLAUDE_STATE
    assert status(where, store_root=store_dir)["mcp"]["registered"] is False


def test_claudes_default_user_file_is_the_homes_claude_json(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: no config dir named (flag or env): Claude keeps user MCP servers in ~/.claude.json,
    beside (not in) ~/.claude; a named one holds its own .claude.json."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    named = target("claude", env={"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")})
    assert named.mcp_file == (tmp_path / "cfg").resolve() / ".claude.json"
    default = target("claude", env={})
    assert default.mcp_file == home / ".claude.json"
    assert default.hooks_file == (home / ".claude" / "settings.json").resolve()


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_project_scope_registers_in_the_projects_own_file(tmp_path: Path, store_dir: Path,
                                                          agent: str) -> None:
    """Fixture: a project directory; install --scope project (Claude: .mcp.json, Codex:
    .codex/config.toml), then uninstall removes what it created."""
    project = tmp_path / "proj"
    project.mkdir()
    (tmp_path / "cfg").mkdir()
    where = target(agent, scope="project", project=str(project), config_dir=str(tmp_path / "cfg"))
    expected = project / (".mcp.json" if agent == "claude" else ".codex/config.toml")
    assert where.mcp_file == project.resolve() / expected.relative_to(project)
    install(where, store_root=store_dir, program=PROGRAM, mcp=True, trust=False)
    assert "sessionkeeper" in _servers(where)
    uninstall(where, store_root=store_dir)
    assert not expected.exists()
