"""The config dirs the `hooks install` tests install into: a Claude Code config dir with the
user's own settings and hook, a Codex home with the user's config.toml."""

from __future__ import annotations

import json
from pathlib import Path

from sessionkeeper.hooks.install import Target, target

PROGRAM = ["/opt/sk/bin/sessionkeeper"]
THEIR_HOOK = {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/bin/their-guard",
                                            "timeout": 5}]}
CLAUDE_SETTINGS = (b'{\n    "model": "opus",\n    "permissions": {"allow": ["Bash(ls)"]},\n'
                   b'    "hooks": {"PreToolUse": [' + json.dumps(THEIR_HOOK).encode() + b']}\n}')
CODEX_CONFIG = (b'# my codex\nmodel = "gpt-5"  # keep\n\n[model_providers.fake]\nname = "fake"\n\n'
                b'[hooks.state."/elsewhere/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:0"\n')


def tree_of(root: Path) -> dict[str, bytes]:
    """Every file under `root`, relative path -> bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def claude_target(tmp_path: Path, settings: bytes | None = CLAUDE_SETTINGS) -> Target:
    """A Claude Code config dir under `tmp_path` holding `settings` (None: no settings.json)."""
    home = tmp_path / "claudecfg"
    home.mkdir()
    if settings is not None:
        (home / "settings.json").write_bytes(settings)
    return target("claude", config_dir=str(home))


def codex_target(tmp_path: Path, hooks: dict[str, object] | None = None) -> Target:
    """A Codex home under `tmp_path` with the user's config.toml and, given `hooks`, hooks.json."""
    home = tmp_path / "codexhome"
    home.mkdir()
    (home / "config.toml").write_bytes(CODEX_CONFIG)
    if hooks is not None:
        (home / "hooks.json").write_text(json.dumps(hooks, indent=2))
    return target("codex", config_dir=str(home))
