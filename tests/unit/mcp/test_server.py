"""The tools as MCP offers them (`mcp.server`): the input schemas are valid JSON Schema and agree
with the server's own argument check; a call's result, its typed errors and its crashes."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from sessionkeeper.errors import UnknownThread
from sessionkeeper.mcp import server
from sessionkeeper.mcp.server import PARAMS, run_tool, tool_list
from sessionkeeper.mcp.tools import Tools

SAMPLES: list[object] = [None, True, False, 0, 7, -3, 7.0, 2.5, "", "last_turn", "payment.py", [], {}]


class _Answering:
    """Stands in for `Tools` (the real ones run over stdio in tests/e2e/test_mcp_server.py):
    each tool returns what it was called with, `todos` raises our typed error, `verifier` crashes."""

    def __getattr__(self, name: str) -> Any:
        def tool(**kwargs: Any) -> dict[str, Any]:
            if name == "todos":
                raise UnknownThread("no session recorded here")
            if name == "verifier":
                raise KeyError("oops")
            return {"tool": name, "args": {k: v for k, v in kwargs.items() if k != "meta"},
                    "meta": kwargs["meta"]}
        return tool


def test_every_tool_of_tools_is_offered_with_a_valid_schema_and_hints() -> None:
    """Fixture: none; the tool list against `Tools`' methods and the JSON Schema meta-schema."""
    listed = tool_list()
    assert [t["name"] for t in listed] == list(PARAMS)
    for tool in listed:
        assert callable(getattr(Tools, tool["name"]))
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        assert tool["description"] and tool["annotations"]["readOnlyHint"] is (tool["name"] != "rewind")


@pytest.mark.parametrize("name", list(PARAMS))
def test_the_argument_check_accepts_exactly_what_the_schema_accepts(name: str) -> None:
    """Fixture: none; every argument of the tool given each sample value, one at a time."""
    [tool] = [t for t in tool_list() if t["name"] == name]
    validator = jsonschema.Draft202012Validator(tool["inputSchema"])
    required = {p.name: "payment.py" for p in PARAMS[name] if "default" not in p.schema()}
    for param in PARAMS[name]:
        for value in SAMPLES:
            arguments = {**required, param.name: value}
            result = run_tool(_Answering(), name, arguments, None)
            assert (not result["isError"]) == validator.is_valid(arguments), (param.name, value, result)


def test_a_call_answers_its_result_as_text_and_structured_content_with_defaults_filled() -> None:
    """Fixture: none; a diff with only its path, and the caller's _meta."""
    result = run_tool(_Answering(), "diff", {"path": "a.py"}, {"session_id": "s"})
    assert result["isError"] is False
    assert result["structuredContent"] == {"tool": "diff", "meta": {"session_id": "s"},
                                           "args": {"path": "a.py", "from_seq": None, "to_seq": None}}
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


def test_typed_errors_crashes_and_unknown_tools_are_tool_errors_the_model_reads() -> None:
    """Fixture: none; a typed error, a crash, an unknown tool, arguments that are not an object."""
    said = {name: run_tool(_Answering(), name, args, None)
            for name, args in [("todos", {}), ("verifier", {}), ("no_such_tool", {}), ("diff", [])]}
    assert all(r["isError"] and "structuredContent" not in r for r in said.values())
    text = {name: r["content"][0]["text"] for name, r in said.items()}
    assert text["todos"] == "Error executing tool todos: unknown_thread: no session recorded here"
    assert "internal_error: KeyError" in text["verifier"]
    assert "unknown tool 'no_such_tool'" in text["no_such_tool"] and "drift_since" in text["no_such_tool"]
    assert "arguments must be an object" in text["diff"]


def test_the_handshake_offers_tools_and_answers_every_listing_method() -> None:
    """Fixture: none; the handlers over stand-in tools."""
    methods = server.handlers(_Answering())  # type: ignore[arg-type]  # a stand-in for Tools
    init = methods["initialize"]({"protocolVersion": "2025-06-18"})
    assert init["capabilities"]["tools"] == {"listChanged": False}
    assert init["serverInfo"]["name"] == "sessionkeeper" and "Session Keeper" in init["instructions"]
    assert methods["tools/list"]({})["tools"] == tool_list()
    assert methods["prompts/list"]({}) == {"prompts": []} and methods["ping"]({}) == {}
