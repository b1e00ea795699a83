"""The server's configuration from `initializationOptions`: typed, checked once, never fatal.

A bad value is reported in one message and its default is used instead; a bad hook spec is
dropped with its reason; the rest of the configuration still applies.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Annotated, Any

import annotated_types as at

from ..recovery.command_hooks import HookSpec
from .protocol import DurabilityName
from .rpc import InvalidParams, structure


@dataclass(frozen=True, kw_only=True)
class ServerOptions:
    """What the editor may configure (all optional)."""

    __pydantic_config__ = {"use_attribute_docstrings": True}
    workspace: str | None = None
    """The workspace folder (default: the first folder the editor opened)."""
    durability: DurabilityName | None = None
    """How far records get before they are acknowledged (default: $SESSIONKEEPER_DURABILITY, else written)."""
    redaction: bool | None = None
    """Redact secrets before they reach disk (default: on, $SESSIONKEEPER_REDACTION)."""
    hooks: list[HookSpec] = field(default_factory=list)
    """Command hooks for lifecycle sources."""
    watch: bool = True
    """Watch the workspace so user and external edits reach file history."""
    askOnDrift: bool = True  # noqa: N815 - the editor's spelling
    """Ask the user (window/showMessageRequest) when a resume finds drift."""
    autoResume: bool = False  # noqa: N815
    """Resume the workspace's latest thread after initialization."""
    contentLimitBytes: Annotated[int, at.Ge(0)] | None = None  # noqa: N815
    """Files larger than this are kept by hash only (default 10 MiB)."""
    allowSecretFiles: bool = False  # noqa: N815
    """Keep the content of secret-named files (.env*, private keys) too (default: hash only)."""
    agents: list[str] | None = None
    """Agents whose own session logs are listed and checked (codex, claude; default: all; []: none)."""
    codexHome: str | None = None  # noqa: N815
    """Codex's home to read (default: $CODEX_HOME, else ~/.codex)."""
    claudeHome: str | None = None  # noqa: N815
    """Claude Code's config dir to read (default: $CLAUDE_CONFIG_DIR, else ~/.claude)."""
    hermesHome: str | None = None  # noqa: N815
    """Hermes Agent's home to read (default: $HERMES_HOME, else ~/.hermes)."""
    index: str | None = None
    """A shared index, postgresql://user@host/db, to share sessions across machines (default:
    $SESSIONKEEPER_INDEX; "local": none). Prefer ~/.pgpass over a password in the URL."""
    openclawHome: str | None = None  # noqa: N815
    """OpenClaw's state dir to read (default: $OPENCLAW_STATE_DIR, else ~/.openclaw)."""


def parse_options(raw: object) -> tuple[ServerOptions, list[str]]:
    """The options, and one line per problem found (each problem falls back to the default)."""
    if raw is None:
        return ServerOptions(), []
    if not isinstance(raw, dict):
        return ServerOptions(), [f"initializationOptions must be an object, not {type(raw).__name__}"]
    problems: list[str] = []
    known = {f.name for f in fields(ServerOptions)}
    values: dict[str, Any] = {}
    for name in known & raw.keys():
        if name == "hooks":
            values["hooks"] = _hooks(raw["hooks"], problems)
            continue
        if name == "index":
            values["index"] = _index(raw["index"], problems)
            continue
        try:
            values[name] = getattr(structure({name: raw[name]}, ServerOptions), name)
        except InvalidParams as exc:
            problems.append(f"{exc} (using the default)")
    return dataclasses.replace(ServerOptions(), **values), problems


def _index(raw: object, problems: list[str]) -> str | None:
    """The shared index's URL, checked without ever quoting its password."""
    from ..errors import IndexUnavailable
    from ..store.index.pg_url import checked

    if raw is None or raw in ("", "local"):
        return raw if raw == "local" else None
    if not isinstance(raw, str):
        problems.append(f"index: expected a postgresql:// URL, not {type(raw).__name__} (none)")
        return None
    try:
        return checked(raw)
    except IndexUnavailable as exc:
        problems.append(f"index: {exc} (none)")
        return None


def _hooks(raw: object, problems: list[str]) -> list[HookSpec]:
    if not isinstance(raw, list):
        problems.append(f"hooks: expected a list, not {type(raw).__name__} (no hooks)")
        return []
    specs, names = [], set()
    for number, item in enumerate(raw):
        try:
            spec = structure(item, HookSpec)
        except (InvalidParams, ValueError) as exc:
            problems.append(f"hooks[{number}]: {exc} (hook ignored)")
            continue
        if spec.name in names:
            problems.append(f"hooks[{number}]: the name {spec.name!r} is taken (hook ignored)")
            continue
        names.add(spec.name)
        specs.append(spec)
    return specs
