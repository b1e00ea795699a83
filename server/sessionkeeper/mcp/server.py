"""The MCP server on stdio (the official `mcp` SDK): the tools of `tools.Tools`, described for the model.

Each tool's description says when to call it. The tools' modules are loaded on a thread once the
handshake had its moment (`_warm`), so the first call pays no import. A call runs on one of the
SDK's worker threads, one call at a time (a lock: the Keeper and its kept reads are shared). Our
typed errors become tool errors the model reads (`ToolError`: `is_error` with `<name>:
<message>`); anything else is caught too and answered as an internal error — the server never
stops for a bad call. The result is one JSON text (summary lines first) and the same object as
structured content."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from ..errors import SessionKeeperError
from .tools import SERVER_NAME, Tools

if TYPE_CHECKING:
    from collections.abc import Mapping

INSTRUCTIONS = """\
Session Keeper records this coding session (its git baseline, every tool call, every file version
and who made it). Ask it instead of assuming: before you act on your earlier view of the branch,
a command's outcome or a file's content, call the matching tool. Results are short JSON with
`summary` lines first. Seqs are Session Keeper's record numbers, shown in every result."""

WARM_AFTER_S = 0.3
"""When the server loads what its tools use: after the agent's handshake, before its first call."""
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                       open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                        open_world_hint=False)


def build(tools: Tools) -> MCPServer[Any]:
    """The MCP server offering `tools`."""
    from .. import __version__

    server: MCPServer[Any] = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS,
                                       version=__version__, log_level="WARNING")
    lock = threading.Lock()

    def run(call: Callable[..., dict[str, Any]], ctx: Context[Any, Any] | None,
            **kwargs: Any) -> CallToolResult:
        meta = _meta(ctx)
        with lock:
            try:
                result = call(**kwargs, meta=meta)
            except SessionKeeperError as exc:
                raise ToolError(f"{exc.name}: {exc}") from None
            except Exception as exc:  # noqa: BLE001 - a bad call never stops the server
                raise ToolError(f"internal_error: {type(exc).__name__}: {exc}") from None
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=result)

    def drift_since(since: int | str = "last_turn",
                    ctx: Context[Any, Any] | None = None) -> CallToolResult:
        return run(tools.drift_since, ctx, since=since)

    def in_doubt_operations(ctx: Context[Any, Any] | None = None) -> CallToolResult:
        return run(tools.in_doubt_operations, ctx)

    def file_history(path: str, ctx: Context[Any, Any] | None = None) -> CallToolResult:
        return run(tools.file_history, ctx, path=path)

    def diff(path: str, from_seq: int | None = None, to_seq: int | None = None,
             ctx: Context[Any, Any] | None = None) -> CallToolResult:
        return run(tools.diff, ctx, path=path, from_seq=from_seq, to_seq=to_seq)

    def rewind_preview(to_seq: int | None = None, path: str | None = None,
                       ctx: Context[Any, Any] | None = None) -> CallToolResult:
        return run(tools.rewind_preview, ctx, to_seq=to_seq, path=path)

    def rewind(to_seq: int | None = None, path: str | None = None, undo: bool = False,
               ctx: Context[Any, Any] | None = None) -> CallToolResult:
        return run(tools.rewind, ctx, to_seq=to_seq, path=path, undo=undo)

    def todos(ctx: Context[Any, Any] | None = None) -> CallToolResult:
        return run(tools.todos, ctx)

    def verifier(ctx: Context[Any, Any] | None = None) -> CallToolResult:
        return run(tools.verifier, ctx)

    threading.Thread(target=_warm, args=(tools,), name="sessionkeeper-mcp-warm", daemon=True).start()
    for fn, hints, description in (
            (drift_since, READ, DESCRIPTIONS["drift_since"]),
            (in_doubt_operations, READ, DESCRIPTIONS["in_doubt_operations"]),
            (file_history, READ, DESCRIPTIONS["file_history"]),
            (diff, READ, DESCRIPTIONS["diff"]),
            (rewind_preview, READ, DESCRIPTIONS["rewind_preview"]),
            (rewind, WRITE, DESCRIPTIONS["rewind"]),
            (todos, READ, DESCRIPTIONS["todos"]),
            (verifier, READ, DESCRIPTIONS["verifier"])):
        server.add_tool(fn, description=description, annotations=hints,
                        structured_output=False)
    return server


def _warm(tools: Tools) -> None:
    """Load the tools' modules once the handshake had its moment (the agent waits for it)."""
    import time

    time.sleep(WARM_AFTER_S)
    tools.warm()


def _meta(ctx: Context[Any, Any] | None) -> Mapping[str, Any] | None:
    """The call's `_meta` (Codex names its session and turn there), or None."""
    try:
        meta = ctx.request_context.meta if ctx is not None else None
    except (ValueError, AttributeError):
        return None
    return dict(meta) if meta else None


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
