"""MCP's stdio transport: JSON-RPC 2.0 messages, one per line, read from stdin and answered on
stdout, with the lifecycle every MCP server shares (initialize with version negotiation, ping,
notifications ignored). What a server offers comes in as `Handlers`.

Our own, not the `mcp` SDK: importing the SDK took ~640 ms of the server's ~700 ms start (its
pydantic models of every protocol version), and an agent offers the tools only once the server
answers. The SDK's client is what the tests talk to.

Invariants: stdout carries protocol messages only (the process's fd 1 is pointed at stderr while
serving, so a stray print can never corrupt the stream); a message that is not JSON, not an
object, or names an unknown method gets its JSON-RPC error and the server goes on; a handler's
exception becomes an internal error for that request only; the server ends at end of input,
or when the agent stops reading.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""The protocol versions this server speaks, newest first (a client asking another gets the newest)."""
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603)

Handlers = Mapping[str, Callable[[Mapping[str, Any]], Any]]
"""Method name -> what answers it (its params in, the JSON-able result out)."""


class RpcError(Exception):
    """A request answered with a JSON-RPC error (code and message)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def initialize(info: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], Any]:
    """The `initialize` handler: the client's protocol version when we speak it, else our
    newest, and `info` (serverInfo, capabilities, instructions)."""
    def answer(params: Mapping[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        return {"protocolVersion": asked if asked in VERSIONS else VERSIONS[0], **info}
    return answer


def _response(message: object, handlers: Handlers) -> dict[str, Any] | None:
    """The answer to one message (None for a notification or a client's response)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
    ident, method = message.get("id"), message.get("method")
    if "id" not in message or ident is None:
        return None  # a notification (initialized, cancelled, ...): nothing to answer
    if not isinstance(method, str):
        return None if ("result" in message or "error" in message) else _error(
            ident, INVALID_REQUEST, "a request names its method")
    params = message.get("params") or {}
    if not isinstance(params, dict):
        return _error(ident, INVALID_PARAMS, "params must be an object")
    handler = handlers.get(method)
    if handler is None:
        return _error(ident, METHOD_NOT_FOUND, f"method not found: {method}")
    try:
        return {"jsonrpc": "2.0", "id": ident, "result": handler(params)}
    except RpcError as exc:
        return _error(ident, exc.code, str(exc))
    except Exception as exc:  # noqa: BLE001 - one bad request never stops the server
        return _error(ident, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


def _error(ident: object, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def answer_line(line: bytes, handlers: Handlers) -> bytes | None:
    """The line to write back for one line read (None: nothing to write)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested past Python's limit
        reply: dict[str, Any] | None = _error(None, PARSE_ERROR, f"not JSON: {exc}")
    else:
        reply = _response(message, handlers)
    if reply is None:
        return None
    return json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def serve(handlers: Handlers, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Answer messages from stdin on stdout until stdin ends."""
    if stdout is None:
        stdout = os.fdopen(os.dup(1), "wb")  # the protocol's own handle on the real stdout
        sys.stdout.flush()
        os.dup2(2, 1)  # anything else written to fd 1 goes to stderr
    source = stdin if stdin is not None else sys.stdin.buffer
    for line in source:
        if not line.strip():
            continue
        out = answer_line(line, handlers)
        if out is not None:
            try:
                stdout.write(out)
                stdout.flush()
            except BrokenPipeError:  # the agent went away: nobody to answer
                return
