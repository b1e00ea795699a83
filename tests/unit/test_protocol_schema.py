"""The protocol's one source: the committed schema.json and PROTOCOL.md tables match the handlers."""

from __future__ import annotations

import orjson

from sessionkeeper.lsp import schema
from sessionkeeper.lsp.rpc import METHODS


def test_the_committed_schema_and_protocol_tables_are_generated_from_the_handlers() -> None:
    """Fixture: vscode-extension/protocol/schema.json and lsp/PROTOCOL.md in the checkout."""
    assert schema.main(["--check"]) == 0


def test_every_method_and_every_type_it_names_is_in_the_schema() -> None:
    """Fixture: the generated schema."""
    data = orjson.loads(schema.SCHEMA_PATH.read_bytes())
    assert set(data["x-methods"]) == set(METHODS)
    for method in data["x-methods"].values():
        assert method["params"] in data["$defs"]
        for name in method["result"].split(" | "):
            assert name == "null" or name in data["$defs"]
    report = data["$defs"]["Report"]["properties"]
    assert {"subsystems", "hook_context", "continued", "session_id", "agent"} <= set(report)
    assert all(prop.get("description") for prop in report.values())
