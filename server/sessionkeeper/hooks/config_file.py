"""An agent's JSON config file (Claude Code's settings.json and .claude.json, Codex's hooks.json)
read and written back as the same JSON: a value Python's json reads but would write differently
(NaN, a number beyond a double, a lone surrogate) is refused before anything is written; every
config file is replaced whole (`write_config`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..errors import AgentConfigInvalid


class _Unwritable(ValueError):
    """A value Python's json reads but cannot write back as the same JSON."""


def _constant(name: str) -> float:
    raise _Unwritable(f"{name}, which is not JSON")


def _double(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Unwritable(f"the number {text}, beyond a double (it would be written back as "
                          "Infinity, which is not JSON)")
    return value


def load_json(path: Path, data: bytes | None, *, to_write: bool = True) -> dict[str, Any]:
    """A hooks file's object; AgentConfigInvalid when it is not one, or (`to_write`) when one of
    its values would not be written back as the same JSON (refused before anything is written)."""
    if data is None or not data.strip():
        return {}
    try:
        parsed = (json.loads(data, parse_constant=_constant, parse_float=_double) if to_write
                  else json.loads(data))
    except _Unwritable as exc:
        raise AgentConfigInvalid(f"{path} holds {exc}; left as it is") from None
    except ValueError as exc:
        raise AgentConfigInvalid(f"{path} is not valid JSON ({str(exc)[:80]}); left as it is") from None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("hooks", {}), dict):
        raise AgentConfigInvalid(f"{path} does not hold a JSON object with a `hooks` object; "
                                 "left as it is")
    if to_write:
        _utf8(path, parsed)
    return parsed


def _utf8(path: Path, config: dict[str, Any]) -> None:
    """AgentConfigInvalid when a string holds a lone surrogate (a \\ud800 escape): not UTF-8."""
    try:
        json.dumps(config, ensure_ascii=False).encode()
    except UnicodeEncodeError as exc:
        raise AgentConfigInvalid(f"{path} holds a lone surrogate (\\u{ord(exc.object[exc.start]):04x}) "
                                 "in a string, which cannot be written back as UTF-8 JSON; "
                                 "left as it is") from None


def dump_json(config: dict[str, Any], original: bytes | None) -> bytes:
    """The config as the agent's file holds it: indented, UTF-8, its final newline kept."""
    text = json.dumps(config, indent=2, ensure_ascii=False, allow_nan=False)
    newline = original is None or original.endswith(b"\n") or not original.strip()
    return (text + ("\n" if newline else "")).encode()


def write_config(path: Path, data: bytes) -> None:
    """Replace one agent config file whole; AgentConfigInvalid when it cannot be (left as it was)."""
    from . import backups

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        backups.write(path, data)
    except OSError as exc:
        raise AgentConfigInvalid(f"{path} cannot be written ({exc.strerror or exc}); "
                                 "left as it is") from None
