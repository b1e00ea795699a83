"""MCP's stdio transport (`mcp.protocol`): one answer per request, errors by JSON-RPC code, the
server going on after every bad line, stdout for protocol messages only."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from sessionkeeper.mcp import protocol
from sessionkeeper.mcp.protocol import RpcError, answer_line, initialize, serve


def _boom(_params: Mapping[str, Any]) -> Any:
    raise ZeroDivisionError("no")


def _refuse(_params: Mapping[str, Any]) -> Any:
    raise RpcError(-32002, "not now")


HANDLERS: protocol.Handlers = {"initialize": initialize({"serverInfo": {"name": "t"}}),
                               "echo": lambda params: dict(params), "boom": _boom,
                               "refuse": _refuse}


def _answer(message: object) -> Any:
    out = answer_line(json.dumps(message).encode(), HANDLERS)
    return None if out is None else json.loads(out)


def _request(method: str, params: object = None, ident: object = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method,
            **({} if params is None else {"params": params})}


def test_a_request_gets_its_result_under_its_own_id() -> None:
    """Fixture: none; an echo request with a string id."""
    assert _answer(_request("echo", {"a": 1}, "x-7")) == {"jsonrpc": "2.0", "id": "x-7",
                                                          "result": {"a": 1}}


def test_initialize_echoes_a_version_it_speaks_and_offers_its_newest_otherwise() -> None:
    """Fixture: none; a client asking each version we speak, then one from the future."""
    for version in protocol.VERSIONS:
        result = _answer(_request("initialize", {"protocolVersion": version}))["result"]
        assert result == {"protocolVersion": version, "serverInfo": {"name": "t"}}
    later = _answer(_request("initialize", {"protocolVersion": "2099-01-01"}))["result"]
    assert later["protocolVersion"] == protocol.VERSIONS[0]


def test_notifications_and_the_clients_responses_get_no_answer() -> None:
    """Fixture: none; `initialized`, a cancellation, a client's response to a server request."""
    assert _answer({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert _answer({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 1}}) is None
    assert _answer({"jsonrpc": "2.0", "id": 9, "result": {}}) is None


def test_each_bad_message_gets_its_own_json_rpc_error() -> None:
    """Fixture: none; not JSON, not an object, no version, no method, bad params, unknown method,
    a handler's refusal and a handler's crash."""
    for line in (b"{not json", b"[" * 100_000, b"\xff\xfe"):
        garbage = json.loads(answer_line(line, HANDLERS) or b"null")
        assert garbage["id"] is None and garbage["error"]["code"] == protocol.PARSE_ERROR
    codes = [
        (_answer([1, 2]), protocol.INVALID_REQUEST),
        (_answer({"id": 1, "method": "echo"}), protocol.INVALID_REQUEST),
        (_answer({"jsonrpc": "2.0", "id": 1}), protocol.INVALID_REQUEST),
        (_answer(_request("echo", [1])), protocol.INVALID_PARAMS),
        (_answer(_request("nope")), protocol.METHOD_NOT_FOUND),
        (_answer(_request("refuse")), -32002),
        (_answer(_request("boom")), protocol.INTERNAL_ERROR)]
    for reply, code in codes:
        assert reply["error"]["code"] == code, reply
    assert "ZeroDivisionError: no" in _answer(_request("boom"))["error"]["message"]


def test_serve_answers_line_by_line_and_goes_on_after_bad_lines() -> None:
    """Fixture: none; a stream of a request, a blank line, garbage, a crash and a request."""
    lines = [json.dumps(_request("echo", {"n": 1}, 1)), "", "garbage",
             json.dumps(_request("boom", None, 2)), json.dumps(_request("echo", {"n": 3}, 3))]
    out = io.BytesIO()
    serve(HANDLERS, io.BytesIO(("\n".join(lines) + "\n").encode()), out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r.get("id") for r in replies] == [1, None, 2, 3]
    assert replies[-1]["result"] == {"n": 3}


def test_a_stray_print_goes_to_stderr_never_into_the_protocol_stream() -> None:
    """Fixture: none; a real process serving a handler that prints, over real pipes."""
    code = """
from sessionkeeper.mcp import protocol
def noisy(params):
    print("noise from a handler")
    return {"ok": True}
protocol.serve({"noisy": noisy})
"""
    request = json.dumps(_request("noisy", {})) + "\n"
    done = subprocess.run([sys.executable, "-c", code], input=request.encode(), capture_output=True,
                          timeout=60, check=True)
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}]
    assert b"noise from a handler" in done.stderr


def test_an_agent_that_stops_reading_ends_the_server_quietly() -> None:
    """Fixture: none; an output whose reader is gone (every write raises BrokenPipeError)."""
    class Gone(io.BytesIO):
        def write(self, _data: object) -> int:
            raise BrokenPipeError

    request = (json.dumps(_request("echo", {})) + "\n").encode() * 3
    serve(HANDLERS, io.BytesIO(request), Gone())  # returns, raising nothing
