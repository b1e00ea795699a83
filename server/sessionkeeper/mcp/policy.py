"""Whether the agent's `rewind` tool may change files: off (the default) or allow.

    off     rewind refuses; rewind_preview still shows what a rewind would do (nothing changes)
    allow   rewind restores the files the session's history names, refusing exactly what
            `sessionkeeper rewind` refuses without --force (changes the session did not make)

Where it is set, first match wins: $SESSIONKEEPER_MCP_REWIND; the git config key
`sessionkeeper.mcpRewind` as git resolves it in the session's workspace (the repository's
.git/config, then ~/.gitconfig: `git config [--global] sessionkeeper.mcpRewind allow`); else off.
An unknown value counts as off, and the refusal says so. Read on every call: a change applies at
once, without restarting the agent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

ENV = "SESSIONKEEPER_MCP_REWIND"
GIT_KEY = "sessionkeeper.mcpRewind"
VALUES = ("off", "allow")


@dataclass(frozen=True)
class RewindSetting:
    """Whether rewind may act, where that was set, and a note when the value was not understood."""

    allowed: bool
    source: str  # env, git, default
    note: str | None = None


def _setting(raw: str, source: str) -> RewindSetting:
    value = raw.strip().lower()
    if value in VALUES:
        return RewindSetting(value == "allow", source)
    return RewindSetting(False, source, f"unknown value {raw.strip()[:40]!r} in {source}: counts "
                                        f"as off (expected one of {', '.join(VALUES)})")


def rewind_setting(workspace: str, env: Mapping[str, str] | None = None) -> RewindSetting:
    """The setting in force for a session in `workspace`."""
    from ..recovery import gitrun

    env = os.environ if env is None else env
    if env.get(ENV, "").strip():
        return _setting(env[ENV], ENV)
    where = workspace if os.path.isdir(workspace) else os.path.expanduser("~")
    done = gitrun.run(where, "config", "--get", GIT_KEY)
    value = done.text().strip() if done.ok else ""
    return _setting(value, f"git config {GIT_KEY}") if value else RewindSetting(False, "default")
