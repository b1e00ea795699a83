"""The MCP server on stdio (`protocol`): the tools of `tools.Tools`, described for the model.

Each tool's description says when to call it; its input schema is written out here (`Param`) and
its arguments are checked against it before the tool runs. The tools' modules are loaded on a
thread once the handshake had its moment (`_warm`), so the first call pays no import. Calls run
one at a time. Our typed errors become tool errors the model reads (`isError` with `<name>:
<message>`); anything else is caught too and answered as an internal error — the server never
stops for a bad call. The result is one JSON text (summary lines first) and the same object as
structured content."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import SessionKeeperError, ToolInputInvalid
from . import protocol
from .tools import SERVER_NAME, Tools

INSTRUCTIONS = """\
Session Keeper records this coding session (its git baseline, every tool call, every file version
and who made it). Ask it instead of assuming: before you act on your earlier view of the branch,
a command's outcome or a file's content, call the matching tool. Results are short JSON with
`summary` lines first. Seqs are Session Keeper's record numbers, shown in every result."""

WARM_AFTER_S = 0.3
"""When the server loads what its tools use: after the agent's handshake, before its first call."""
READ = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
WRITE = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False}
_REQUIRED = object()
_NAMES = {"integer": "an integer", "string": "a string", "boolean": "true or false",
          "null": "null"}


class Param:
    """One argument of a tool: its JSON types (in the order a schema lists them) and default."""

    __slots__ = ("name", "types", "default")

    def __init__(self, name: str, *types: str, default: object = _REQUIRED) -> None:
        self.name, self.types, self.default = name, types, default

    def schema(self) -> dict[str, Any]:
        """Its JSON Schema property."""
        kinds = [{"type": t} for t in self.types]
        out: dict[str, Any] = kinds[0] if len(kinds) == 1 else {"anyOf": kinds}
        if self.default is not _REQUIRED:
            out = {**out, "default": self.default}
        return {**out, "title": self.name.replace("_", " ").title()}

    def value(self, arguments: Mapping[str, Any]) -> object:
        """The argument's value in a call (its default when absent), or `ToolInputInvalid`."""
        if self.name not in arguments:
            if self.default is _REQUIRED:
                raise ToolInputInvalid(f"{self.name} is required")
            return self.default
        found = arguments[self.name]
        if isinstance(found, float) and found.is_integer() and "integer" in self.types:
            return int(found)  # JSON Schema's integer: 7.0 is one
        if any(_is(found, t) for t in self.types):
            return found
        expected = " or ".join(_NAMES[t] for t in self.types)
        raise ToolInputInvalid(f"{self.name} must be {expected}, not {json.dumps(found)[:60]}")


def _is(value: object, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    return value is None


SEQ = ("integer", "null")
PARAMS: dict[str, tuple[Param, ...]] = {
    "drift_since": (Param("since", "integer", "string", default="last_turn"),),
    "in_doubt_operations": (),
    "file_history": (Param("path", "string"),),
    "diff": (Param("path", "string"), Param("from_seq", *SEQ, default=None),
             Param("to_seq", *SEQ, default=None)),
    "rewind_preview": (Param("to_seq", *SEQ, default=None), Param("path", "string", "null", default=None)),
    "rewind": (Param("to_seq", *SEQ, default=None), Param("path", "string", "null", default=None),
               Param("undo", "boolean", default=False)),
    "todos": (),
    "verifier": (),
}
"""Each tool's arguments, in the order its schema lists them."""


def tool_list() -> list[dict[str, Any]]:
    """What `tools/list` answers: every tool's name, description, input schema and hints."""
    out = []
    for name, params in PARAMS.items():
        schema: dict[str, Any] = {"type": "object", "properties": {p.name: p.schema() for p in params}}
        required = [p.name for p in params if p.default is _REQUIRED]
        if required:
            schema["required"] = required
        out.append({"name": name, "description": DESCRIPTIONS[name], "inputSchema": schema,
                    "annotations": WRITE if name == "rewind" else READ})
    return out


def handlers(tools: Tools) -> protocol.Handlers:
    """The methods the server answers, over `tools`."""
    from .. import __version__

    listed = tool_list()

    def call(params: Mapping[str, Any]) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments") or {}
        meta = params.get("_meta")
        return run_tool(tools, name, arguments, meta if isinstance(meta, dict) else None)

    return {
        "initialize": protocol.initialize({
            "capabilities": {"tools": {"listChanged": False}, "prompts": {"listChanged": False},
                             "resources": {"listChanged": False, "subscribe": False}},
            "serverInfo": {"name": SERVER_NAME, "version": __version__},
            "instructions": INSTRUCTIONS}),
        "ping": lambda _params: {},
        "tools/list": lambda _params: {"tools": listed},
        "tools/call": call,
        "prompts/list": lambda _params: {"prompts": []},
        "resources/list": lambda _params: {"resources": []},
        "resources/templates/list": lambda _params: {"resourceTemplates": []},
        "logging/setLevel": lambda _params: {},
    }


def run_tool(tools: Tools, name: object, arguments: object,
             meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """One `tools/call`: its result, or a tool error the model reads."""
    try:
        if not isinstance(name, str) or name not in PARAMS:
            raise ToolInputInvalid(f"unknown tool {str(name)[:60]!r}: the tools are {', '.join(PARAMS)}")
        if not isinstance(arguments, dict):
            raise ToolInputInvalid("arguments must be an object")
        kwargs = {p.name: p.value(arguments) for p in PARAMS[name]}
        call: Callable[..., dict[str, Any]] = getattr(tools, name)
        result = call(**kwargs, meta=meta)
    except SessionKeeperError as exc:
        return _tool_error(name, f"{exc.name}: {exc}")
    except Exception as exc:  # noqa: BLE001 - a bad call never stops the server
        return _tool_error(name, f"internal_error: {type(exc).__name__}: {exc}")
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    return {"content": [{"type": "text", "text": text}], "structuredContent": result, "isError": False}


def _tool_error(name: object, message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Error executing tool {name}: {message}"}],
            "isError": True}


def serve(tools: Tools) -> None:
    """Serve `tools` on stdin/stdout until the agent closes them."""
    threading.Thread(target=_warm, args=(tools,), name="sessionkeeper-mcp-warm", daemon=True).start()
    protocol.serve(handlers(tools))


def _warm(tools: Tools) -> None:
    """Load the tools' modules once the handshake had its moment (the agent waits for it)."""
    import time

    time.sleep(WARM_AFTER_S)
    tools.warm()


DESCRIPTIONS = {
    "drift_since": (
        "What changed in this session's workspace since a point: the branch, HEAD (with the new "
        "commits' subjects) and every file, each with who changed it — you (which tool call), the "
        "user, or someone outside the session. Call it before you act on the branch, a commit or "
        "a file content you saw earlier, at the start of a turn after the user was away, and "
        "before committing or pushing. `since`: \"last_turn\" (default: since the user's latest "
        "prompt), \"session_start\", or a seq number from an earlier result."),
    "in_doubt_operations": (
        "Tool calls of this session that started and never finished (the agent or the machine "
        "was cut off while they ran), with their arguments, what changed since, and what to check "
        "before running them again. Call it after a resume or a crash, and before repeating a "
        "command that may already have run (a deploy, a migration, a push, a write)."),
    "file_history": (
        "Every version of one file this session knows (seq, author: agent, user, external or "
        "rewind), and whether the disk still holds the latest one. Call it before you overwrite "
        "or patch a file you read earlier: if someone else changed it, re-read it first. `path`: "
        "workspace-relative or absolute inside the workspace."),
    "diff": (
        "Unified diffs of one file's recorded versions, each headed with the seq and author of "
        "both sides. `from_seq` (exclusive) and `to_seq` (inclusive) bound the range; without "
        "them, every change the session recorded. Call it to see exactly what you or someone "
        "else changed in a file."),
    "rewind_preview": (
        "What a rewind would do to each file, without changing anything: restore, delete, "
        "unchanged, or refused (a change the session did not make is never overwritten). "
        "`to_seq`: back to the versions at that seq; `path` alone: undo your latest change of that "
        "file. Also says whether the user allows you to rewind."),
    "rewind": (
        "Restore files to their versions at a seq (`to_seq`, optionally one `path`; a `path` "
        "alone undoes your latest change of it), or undo the latest rewind (`undo`: true). Only "
        "when the user allows it (off by default); files changed by the user or outside the "
        "session are refused, never overwritten. Call rewind_preview first."),
    "todos": (
        "This session's todo list as last recorded (items and status). Call it after a resume or "
        "a compaction to pick up where the work stood."),
    "verifier": (
        "The latest test run and review this session recorded, and whether each is stale (a file "
        "changed after it ran). Call it before you claim the tests pass."),
}
