"""The protocol as data: JSON Schema and PROTOCOL.md's tables, generated from the handlers.

One source: every `@rpc` handler's params class and return annotation, the notifications, the
errors in errors.py. `python -m sessionkeeper.lsp.schema --write` regenerates
`vscode-extension/protocol/schema.json` (from which the extension's TypeScript types are
generated) and the tables of PROTOCOL.md; `--check` fails when either is stale (a test runs it).
A development tool: it imports pydantic to build the schema; the server never imports it.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import types
import typing
from pathlib import Path
from typing import Any

import orjson

from .. import errors
from ..recovery.report import DECISIONS, VERDICTS, Report
from . import features  # noqa: F401 - registers every method
from .protocol import NOTIFICATIONS, bind_result_names
from .rpc import METHODS, InvalidParams

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parents[2]
SCHEMA_PATH = CHECKOUT / "vscode-extension" / "protocol" / "schema.json"
MARKDOWN_PATH = HERE / "PROTOCOL.md"
BEGIN, END = "<!-- generated from the handlers: begin -->", "<!-- generated from the handlers: end -->"


def _result_type(name: str) -> Any:
    """The result type a handler declares (the report type, which handlers import for the type
    checker only so a started server never loads it, is named here)."""
    handler = METHODS[name].handler
    names = {**vars(sys.modules[handler.__module__]), "Report": Report}
    return typing.get_type_hints(handler, names)["return"]


def _name(kind: Any) -> str:
    if kind is type(None):
        return "null"
    args = typing.get_args(kind)
    if args and typing.get_origin(kind) in (typing.Union, types.UnionType):
        return " | ".join(_name(a) for a in args)
    return getattr(kind, "__name__", str(kind))


def errors_table() -> list[dict[str, Any]]:
    """Every typed error: its name, JSON-RPC code, CLI exit code and meaning."""
    found: list[type[errors.SessionKeeperError]] = [errors.SessionKeeperError,
                                                     *_subclasses(errors.SessionKeeperError)]
    rows: dict[str, dict[str, Any]] = {
        cls.name: {"name": cls.name, "rpc_code": cls.rpc_code, "exit_code": cls.exit_code,
                   "meaning": (inspect.getdoc(cls) or "").splitlines()[0]}
        for cls in found if cls is not InvalidParams}
    rows["invalid_params"] = {"name": "invalid_params", "rpc_code": InvalidParams.rpc_code,
                              "exit_code": None, "meaning": inspect.getdoc(InvalidParams)}
    return sorted(rows.values(), key=lambda r: (r["rpc_code"], r["name"]))


def _subclasses(cls: type[errors.SessionKeeperError]) -> list[type[errors.SessionKeeperError]]:
    out: list[type[errors.SessionKeeperError]] = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def protocol_schema() -> dict[str, Any]:
    """The JSON Schema of every params and result type, with the method table as `x-methods`."""
    from pydantic import TypeAdapter

    bind_result_names()
    kinds: dict[str, Any] = {}
    methods = {}
    for name in sorted(METHODS):
        params, result = METHODS[name].params, _result_type(name)
        kinds[params.__name__] = params
        kinds[_name(result).replace(" | null", "")] = result
        methods[name] = {"params": params.__name__, "result": _name(result),
                         "summary": inspect.getdoc(METHODS[name].handler) or ""}
    for kind in NOTIFICATIONS.values():
        kinds[_name(kind).replace(" | null", "")] = kind
    defs: dict[str, Any] = {}
    properties = {}
    for key, kind in sorted(kinds.items()):
        schema = TypeAdapter(kind).json_schema(ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        if "$ref" not in schema and schema.get("type") == "object":
            defs[key] = schema
            properties[key] = {"$ref": f"#/$defs/{key}"}
        else:
            properties[key] = schema
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "SessionKeeperProtocol", "type": "object", "properties": properties,
        "required": sorted(properties), "additionalProperties": False, "$defs": defs,
        "x-methods": methods,
        "x-notifications": {n: _name(k) for n, k in NOTIFICATIONS.items()},
        "x-errors": errors_table(), "x-verdicts": list(VERDICTS), "x-decisions": list(DECISIONS),
    }


def _type_text(prop: dict[str, Any]) -> str:
    if not prop:
        return "any"
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in prop:
        return " \\| ".join(_type_text(p) for p in prop["anyOf"])
    if "enum" in prop:
        return " \\| ".join(f'"{v}"' for v in prop["enum"])
    if "const" in prop:
        return f'"{prop["const"]}"'
    if prop.get("type") == "array":
        return f"{_type_text(prop.get('items', {}))}[]"
    if prop.get("type") == "object":
        values = prop.get("additionalProperties")
        return f"{{[key]: {_type_text(values) if isinstance(values, dict) else 'any'}}}"
    return str(prop.get("type", "any"))


def markdown(schema: dict[str, Any]) -> str:
    """The generated part of PROTOCOL.md: methods, notifications, types, errors."""
    out = ["## Requests (client → server)", "", "| method | params | result | what it does |",
           "|---|---|---|---|"]
    for name, m in schema["x-methods"].items():
        result = m["result"].replace("|", "\\|")
        out.append(f"| `{name}` | {m['params']} | {result} | {m['summary']} |")
    out += ["", "## Notifications (server → client)", "", "| method | params |", "|---|---|"]
    out += [f"| `{n}` | {k.replace('|', chr(92) + '|')} |"
            for n, k in schema["x-notifications"].items()]
    out += ["", "## Types", ""]
    for name, spec in sorted(schema["$defs"].items()):
        if spec.get("type") != "object":
            continue
        out += [f"### {name}", "", spec.get("description", "").strip(), "",
                "| field | type | required | meaning |", "|---|---|---|---|"]
        required = set(spec.get("required", []))
        for field, prop in spec.get("properties", {}).items():
            meaning = (prop.get("description") or "").replace("\n", " ").replace("|", "\\|")
            out.append(f"| `{field}` | {_type_text(prop)} | {'yes' if field in required else ''} "
                       f"| {meaning} |")
        out.append("")
    out += ["## Errors", "", "Every error carries `data: {error: <name>, message}`.", "",
            "| JSON-RPC code | name | CLI exit code | meaning |", "|---|---|---|---|"]
    out += [f"| {e['rpc_code']} | `{e['name']}` | {e['exit_code'] or '-'} | {e['meaning']} |"
            for e in schema["x-errors"]]
    return "\n".join(out) + "\n"


def _with_tables(document: str, tables: str) -> str:
    head, _, rest = document.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{tables}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    """`--write` regenerates the files; `--check` exits 1 naming the stale ones."""
    parser = argparse.ArgumentParser(prog="python -m sessionkeeper.lsp.schema")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    schema = protocol_schema()
    wanted = {SCHEMA_PATH: orjson.dumps(schema, option=orjson.OPT_INDENT_2).decode() + "\n",
              MARKDOWN_PATH: _with_tables(MARKDOWN_PATH.read_text(), markdown(schema))}
    stale = [p for p, text in wanted.items() if not p.exists() or p.read_text() != text]
    if args.write:
        for path in stale:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(wanted[path])
            print(f"wrote {path}")
        return 0
    if stale:
        print("stale (run `python -m sessionkeeper.lsp.schema --write`): "
              + ", ".join(str(p) for p in stale), file=sys.stderr)
        return 1
    if not args.check:
        sys.stdout.write(wanted[SCHEMA_PATH])
    return 0


if __name__ == "__main__":
    sys.exit(main())
