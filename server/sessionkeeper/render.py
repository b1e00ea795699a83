"""Human-readable output for the CLI and the demo: short sections, aligned tables, optional colour."""

from __future__ import annotations

import os
import sys
from typing import Any

_COLOURS = {"ok": "32", "drift": "33", "blocked": "31", "dim": "2", "bold": "1"}


def colour_enabled(stream: Any = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    stream = stream or sys.stdout
    return hasattr(stream, "isatty") and stream.isatty() and "NO_COLOR" not in os.environ


def paint(text: str, style: str, *, on: bool) -> str:
    """Wrap `text` in an ANSI style when colour is on."""
    return f"\033[{_COLOURS[style]}m{text}\033[0m" if on else text


def table(rows: list[list[str]], headers: list[str]) -> str:
    """An aligned plain-text table."""
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows, strict=True)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def _short(value: Any) -> str:
    if isinstance(value, str) and len(value) == 40 and all(c in "0123456789abcdef" for c in value):
        return value[:10]
    if isinstance(value, dict) and "path" in value:
        digest = (value.get("hash") or "missing")[:10]
        return f"{value['path']}@{digest} ({value.get('author', '?')})"
    if isinstance(value, dict):
        return value.get("repo_root") or str(value)
    return "-" if value is None else str(value)


def report_text(report: dict[str, Any], *, colour: bool = False) -> str:
    """A resume report as a few short sections."""
    verdict = report["verdict"]
    out = [f"verdict  {paint(verdict.upper(), verdict, on=colour)}   thread {report['thread_id']}"
           f"   restored to seq {report['restored_to_seq']}"]
    if report.get("title"):
        out.append(f"title    {report['title']}")
    if report["differences"]:
        out += ["", "differences (recorded -> now)", table(
            [[d["kind"], _short(d["recorded"]), _short(d["current"]), d["detail"]]
             for d in report["differences"]], ["kind", "recorded", "now", "detail"])]
    if report["invalidated"]:
        out += ["", "invalidated"] + [f"  {i['subsystem']}: {i['reason']}"
                                      for i in report["invalidated"]]
    out += ["", "restored"] + _restored(report)
    if report["in_doubt_operations"]:
        out += ["", "operations in doubt (started, never committed: decide before re-running)"]
        out += [f"  {o['operation_id']}  {o['tool']}  (seq {o['seq']})"
                for o in report["in_doubt_operations"]]
    for key, title in (("quarantined", "quarantined tail"), ("damaged", "damage"),
                       ("hook_failures", "hook failures")):
        if report.get(key):
            out += ["", title] + [f"  {_one_line(x)}" for x in report[key]]
    if report.get("switch_back"):
        out += ["", f"to switch back: {report['switch_back']}"]
    if report.get("choices"):
        out += [f"choices: {', '.join(report['choices'])}"]
    if report.get("continued"):
        out += [f"continued as session {report['session_id']}"]
    return "\n".join(out)


def _restored(report: dict[str, Any]) -> list[str]:
    todos, tests = report.get("todos") or {}, (report.get("verifier") or {}).get("tests")
    cost = ((report.get("cost") or {}).get("total") or {})
    perms, model = report.get("permissions") or {}, report.get("model") or {}
    agent = (report.get("attribution") or {}).get("agent", [])
    stale = " (stale: rerun)" if report.get("rerun_verifier") else ""
    rows = [
        ["todos", f"{todos.get('done', 0)}/{todos.get('total', 0)} done"],
        ["tests", f"{tests['passed']}/{tests['total']} passed{stale}" if tests else "none recorded"],
        ["cost", f"${cost.get('usd', 0):.4f}, {cost.get('input_tokens', 0)} in / "
                 f"{cost.get('output_tokens', 0)} out tokens"],
        ["permissions", ", ".join(f"{k}={v}" for k, v in perms.items()) or "-"],
        ["model", str(model.get("effective") or "-")],
        ["agent's files", ", ".join(agent) or "-"],
    ]
    return ["  " + line for line in table(rows, ["state", "value"]).splitlines()[2:]]


def _one_line(item: Any) -> str:
    if isinstance(item, dict):
        return "  ".join(f"{k}={v}" for k, v in item.items() if v not in (None, ""))
    return str(item)


def threads_text(rows: list[dict[str, Any]]) -> str:
    """A listing of thread summaries."""
    if not rows:
        return "no threads"
    body = []
    for r in rows:
        todos, tests = r.get("todos") or {}, r.get("tests")
        flags = ("archived " if r["archived"] else "") + ("DAMAGED" if r["damaged"] else "")
        body.append([r["thread_id"], (r.get("title") or "-")[:32], r.get("branch") or "-",
                     (r.get("last_activity") or "")[:19].replace("T", " "),
                     f"{todos.get('done', 0)}/{todos.get('total', 0)}",
                     f"{tests['passed']}/{tests['total']}" if tests else "-",
                     r.get("state") or "-", flags])
    return table(body, ["thread", "title", "branch", "last activity", "todos", "tests",
                        "resume?", ""])
