"""Our MCP server in the agents' own config: where it goes, its entry, merged in and taken out.

    claude  user:    $CLAUDE_CONFIG_DIR/.claude.json (else ~/.claude.json)  "mcpServers"
            project: <project>/.mcp.json                                     "mcpServers"
    codex   user:    $CODEX_HOME/config.toml (else ~/.codex/config.toml)     [mcp_servers.<name>]
            project: <project>/.codex/config.toml                            [mcp_servers.<name>]

Both as the real CLIs write them (`claude mcp add --scope user|project`, `codex mcp add`,
checked against Claude Code 2.1.332 and Codex 0.171.0): an entry named `sessionkeeper` running
`sessionkeeper mcp --agent <agent> [--store DIR]`. An entry of that name is ours only when it runs
`sessionkeeper mcp`; another one is left as it is (and said so). Pure functions over bytes: the
files are read, backed up and written by `install` (same rules as the hook files); a JSON file
keeps every other key (Claude Code keeps its own state in .claude.json), config.toml every other
line (tomlkit).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import AgentConfigInvalid
from . import backups, config_file

NAME = "sessionkeeper"
"""The server's name in the agents' config (their tools: mcp__sessionkeeper__<tool>)."""


def mcp_file(agent: str, *, home: Path, project: Path | None, home_named: bool) -> Path:
    """Where an agent keeps its MCP servers for a scope (`home_named`: the config dir was given
    by a flag or the agent's env variable; Claude's default user file is ~/.claude.json)."""
    if agent == "claude":
        if project is not None:
            return project / ".mcp.json"
        return (home if home_named else Path(os.path.expanduser("~"))) / ".claude.json"
    return (project / ".codex" if project is not None else home) / "config.toml"


def argv_for(agent: str, *, program: Sequence[str], store: str | None) -> list[str]:
    """The command line of our MCP server for an agent (with `--store` only when one was named)."""
    return [*program, "mcp", "--agent", agent, *(["--store", store] if store else [])]


def is_ours(entry: object) -> bool:
    """True when an MCP server entry runs `sessionkeeper mcp`."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return False
    argv = [entry["command"], *args]
    if "mcp" not in argv:
        return False
    head = argv[:argv.index("mcp")]
    return any(os.path.basename(token) == NAME for token in head)


def registered(agent: str, path: Path, data: bytes | None) -> dict[str, Any]:
    """What the file holds under our name: {"registered", "ours", "command"} (for status)."""
    try:
        entry = _entry_in(agent, path, data)
    except AgentConfigInvalid as exc:
        return {"registered": False, "ours": False, "command": None, "note": str(exc)}
    if entry is None:
        return {"registered": False, "ours": False, "command": None}
    command = shlex.join([str(entry.get("command")), *[str(a) for a in entry.get("args") or []]])
    return {"registered": is_ours(entry), "ours": is_ours(entry), "command": command}


def register(agent: str, path: Path, argv: list[str], *, manifest: backups.Manifest,
             changed: list[str]) -> str:
    """Register our MCP server in `path` (backed up first, like the hook files); what was done."""
    before = backups.read(path)
    data, line = merged(agent, path, before, argv)
    if data is None:
        return line
    created = backups.missing_dirs(path)
    manifest.created_dirs += [str(d) for d in created if str(d) not in manifest.created_dirs]
    manifest.keep_original(path, before)
    config_file.write_config(path, data)
    manifest.left(path, data)
    if str(path) not in changed:
        changed.append(str(path))
    return line


def _entry_in(agent: str, path: Path, data: bytes | None) -> dict[str, Any] | None:
    if agent == "claude":
        servers = _json(path, data).get("mcpServers")
        entry = servers.get(NAME) if isinstance(servers, dict) else None
    else:
        servers = _toml(path, data).unwrap().get("mcp_servers")
        entry = servers.get(NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None


def merged(agent: str, path: Path, data: bytes | None, argv: list[str]) -> tuple[bytes | None, str]:
    """(the file with our entry, or None when it needs no change; what was done)."""
    entry = _entry_in(agent, path, data)
    if entry is not None and not is_ours(entry):
        raise AgentConfigInvalid(f"{path}: an MCP server named {NAME!r} that does not run "
                                 "`sessionkeeper mcp` is there; left as it is (rename it, or "
                                 "install with --no-mcp)")
    if entry is not None and [entry.get("command"), *(entry.get("args") or [])] == argv:
        return None, f"MCP server {NAME} already registered in {path}"
    verb = "updated" if entry is not None else "registered"
    if agent == "claude":
        config = _json(path, data)
        servers = config.get("mcpServers")
        if servers is not None and not isinstance(servers, dict):
            raise AgentConfigInvalid(f"{path}: mcpServers is not an object; left as it is")
        config["mcpServers"] = {**(servers or {}),
                                NAME: {"type": "stdio", "command": argv[0], "args": argv[1:],
                                       "env": {}}}
        return config_file.dump_json(config, data), f"{verb} MCP server {NAME} in {path}"
    import tomlkit

    doc = _toml(path, data)
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    elif not isinstance(servers, dict):
        raise AgentConfigInvalid(f"{path}: mcp_servers is not a table; left as it is")
    table = tomlkit.table()
    table["command"] = argv[0]
    table["args"] = argv[1:]
    servers[NAME] = table
    return tomlkit.dumps(doc).encode(), f"{verb} MCP server {NAME} in {path}"


def without(agent: str, path: Path, data: bytes) -> bytes | None:
    """The file without our entry (None when it holds none of ours)."""
    entry = _entry_in(agent, path, data)
    if entry is None or not is_ours(entry):
        return None
    if agent == "claude":
        config = _json(path, data)
        servers = {k: v for k, v in config["mcpServers"].items() if k != NAME}
        if servers:
            config["mcpServers"] = servers
        else:
            config.pop("mcpServers")
        return config_file.dump_json(config, data)
    import tomlkit

    doc = _toml(path, data)
    servers = doc["mcp_servers"]
    del servers[NAME]
    if not servers:
        del doc["mcp_servers"]
    return tomlkit.dumps(doc).encode()


def _json(path: Path, data: bytes | None) -> dict[str, Any]:
    return config_file.load_json(path, data)


def _toml(path: Path, data: bytes | None) -> Any:
    """config.toml parsed (tomlkit); AgentConfigInvalid when it is not UTF-8 TOML."""
    import tomlkit

    try:
        text = (data or b"").decode("utf-8")
        return tomlkit.parse(text)
    except UnicodeDecodeError as exc:
        raise AgentConfigInvalid(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
                                 "left as it is") from None
    except Exception as exc:  # tomlkit raises its own ParseError family (and ValueError)
        raise AgentConfigInvalid(f"{path} is not valid TOML ({str(exc)[:120]}); left as it is") \
            from None
