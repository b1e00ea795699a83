"""Session Keeper inside OpenClaw: where the OpenClaw plugin shipped in this package lives.

OpenClaw (2026.9) owns its session storage (a per-agent SQLite store: there is no storage
interface to plug a backend into; Session Keeper reads that store, `agents/openclaw.py`), but it
runs plugin hooks inside every turn. `openclaw_plugin/` beside this module is a plain-JavaScript
OpenClaw plugin (id `sessionkeeper`, no dependencies) whose `before_prompt_build` hook runs
`sessionkeeper --check-resume` for the turn's session and workspace and prepends the drift to the
model's context, and whose `before_agent_run` hook stops a turn whose workspace holds another
repository (or none). It fails open: without sessionkeeper, on a timeout or on any error the turn
goes on. Load it with `plugins.load.paths` (or `openclaw plugins install --link`) and allow its
conversation hooks (`plugins.entries.sessionkeeper.hooks.allowConversationAccess: true`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PLUGIN_ID = "sessionkeeper"


def plugin_dir() -> Path:
    """The folder of the OpenClaw plugin (package.json, openclaw.plugin.json, index.mjs)."""
    return Path(__file__).resolve().parent / "openclaw_plugin"


def plugin_config(command: list[str] | None = None, *, timeout_ms: int = 8000) -> dict[str, Any]:
    """The `plugins` part of an openclaw.json that loads and enables the plugin (`command`: how
    the plugin runs sessionkeeper, default `sessionkeeper` on PATH)."""
    entry: dict[str, Any] = {"enabled": True, "hooks": {"allowConversationAccess": True},
                             "config": {"timeoutMs": timeout_ms}}
    if command:
        entry["config"]["command"] = list(command)
    return {"load": {"paths": [str(plugin_dir())]}, "entries": {PLUGIN_ID: entry}}
