"""Codex hook trust: Codex runs a user hook only once its hash is trusted in config.toml.

    [hooks.state."<abs path of hooks.json>:<event key>:<group index>:<handler index>"]
    trusted_hash = "sha256:<hex>"

The hash is Codex's own `command_hook_hash` (codex-rs/hooks/src/engine/discovery.rs): sha256 of
the compact JSON, keys sorted, of `{"event_name": <event key>, ["matcher": ...,] "hooks":
[{"type": "command", "command": ..., "timeout": <seconds>, "async": false}]}` — checked against
the real `codex app-server` (`hooks/list` → `currentHash`) in the end-to-end tests. Codex resolves
the hooks.json path (symlinks followed) for the key. `hooks install` trusts only Session Keeper's
own entries, the way Codex's `/hooks` review stores it; it never passes
`--dangerously-bypass-hook-trust` and never trusts another tool's hook or a project.
config.toml is edited with tomlkit, so every other line keeps its exact text.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

EVENT_KEYS = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit",
              "PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use",
              "PreCompact": "pre_compact", "PostCompact": "post_compact"}
"""Codex's key label of each event (`hook_event_key_label`)."""
_DEFAULT_TIMEOUT_S = 600


def trust_key(hooks_json: Path, event: str, group: int, handler: int = 0) -> str:
    """The key Codex files a hook's trust under."""
    return f"{os.path.realpath(hooks_json)}:{EVENT_KEYS[event]}:{group}:{handler}"


def trust_hash(event: str, group: dict[str, Any]) -> str:
    """Codex's `currentHash` of a matcher group holding one command handler."""
    handler = group["hooks"][0]
    normalized: dict[str, Any] = {"type": "command", "command": handler["command"],
                                  "timeout": max(int(handler.get("timeout") or _DEFAULT_TIMEOUT_S), 1),
                                  "async": bool(handler.get("async", False))}
    if handler.get("statusMessage") is not None:
        normalized["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": EVENT_KEYS[event], "hooks": [normalized]}
    if group.get("matcher") is not None and event in ("PreToolUse", "PostToolUse", "SessionStart"):
        identity["matcher"] = group["matcher"]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _document(text: str) -> Any:
    import tomlkit

    from ..errors import AgentConfigInvalid

    try:
        return tomlkit.parse(text)
    except Exception as exc:  # tomlkit raises its own ParseError family (and ValueError)
        raise AgentConfigInvalid(f"config.toml is not valid TOML ({str(exc)[:120]}); left as it is") from None


def _plain(text: str) -> dict[str, Any] | None:
    """config.toml as plain data, or None when it is not TOML."""
    from ..errors import AgentConfigInvalid

    try:
        data = _document(text).unwrap()
    except AgentConfigInvalid:
        return None
    return data if isinstance(data, dict) else None


def _state_table(doc: Any, *, create: bool) -> Any:
    import tomlkit
    from tomlkit.items import Table

    from ..errors import AgentConfigInvalid

    hooks = doc.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = tomlkit.table(is_super_table=True)
        doc["hooks"] = hooks
    state = hooks.get("state") if isinstance(hooks, Table) else None
    if state is None and isinstance(hooks, Table):
        if not create:
            return None
        state = tomlkit.table(is_super_table=True)
        hooks["state"] = state
    if not isinstance(state, Table):  # an inline table, an array, a value: not ours to reshape
        if not create:
            return None
        raise AgentConfigInvalid("config.toml's `hooks` or `hooks.state` is not a [table] hook "
                                 "trust can be filed in; left as it is")
    return state


def check(text: str) -> None:
    """Raise AgentConfigInvalid when config.toml's text is not TOML trust can be filed in."""
    _state_table(_document(text), create=True)


def with_trust(text: str, trusted: dict[str, str]) -> str:
    """config.toml text with `trusted_hash` set for each key (other keys and lines untouched)."""
    import tomlkit

    doc = _document(text)
    state = _state_table(doc, create=True)
    for key, digest in trusted.items():
        entry = state.get(key)
        if entry is None:
            entry = tomlkit.table()
            state[key] = entry
        entry["trusted_hash"] = digest
    return tomlkit.dumps(doc)


def without_trust(text: str, keys: set[str], *, moves: dict[str, str] | None = None) -> str:
    """config.toml text without the trust of `keys`; `moves` re-files other hooks' trust under
    their new keys (their groups moved up when ours were removed from the list)."""
    doc = _document(text)
    state = _state_table(doc, create=False)
    if state is None:
        return text
    for key in keys:
        if key in state:
            del state[key]
    for old, new in sorted((moves or {}).items(), key=lambda kv: kv[1]):
        if old in state and new not in state:
            state[new] = state[old]
            del state[old]
    hooks = doc.get("hooks")
    if not state and hooks is not None:
        del hooks["state"]
        if not hooks:
            del doc["hooks"]
    import tomlkit

    return tomlkit.dumps(doc)


def trust_of(text: str) -> dict[str, dict[str, Any]]:
    """Every `[hooks.state."<key>"]` table of a config.toml: {key: {"trusted_hash", "enabled"}}."""
    data = _plain(text)
    if data is None:
        return {}
    state = (data.get("hooks") or {}).get("state") if isinstance(data.get("hooks"), dict) else None
    return {k: v for k, v in state.items() if isinstance(v, dict)} if isinstance(state, dict) else {}


def notes_of(text: str, *, project: str | None) -> list[str]:
    """What in config.toml keeps hooks from running: the hooks feature off, an untrusted project."""
    data = _plain(text)
    if data is None:
        return ["config.toml is not valid TOML: Codex will not start until it is fixed"]
    notes = []
    features = data.get("features")
    if isinstance(features, dict) and features.get("hooks") is False:
        notes.append("[features] hooks = false in config.toml: Codex runs no hooks")
    if project is not None:
        raw = data.get("projects")
        projects: dict[str, Any] = raw if isinstance(raw, dict) else {}
        entry = projects.get(os.path.realpath(project)) or projects.get(project) or {}
        if not (isinstance(entry, dict) and entry.get("trust_level") == "trusted"):
            notes.append(f"Codex loads {project}/.codex/ only for a trusted project: trust it in "
                         "Codex (Session Keeper never does that for you)")
    return notes
