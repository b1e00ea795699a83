"""Human-readable output for the CLI and the demo: short sections, aligned tables, optional colour.

Everything that came from a log (titles, paths, reasons) passes through `clean`, so control
characters and terminal escapes are shown escaped, never interpreted; columns are aligned by
display width (CJK and emoji count double).
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from collections.abc import Sequence
from typing import Any, TextIO

from .recovery.report import Report
from .recovery.summary import ThreadSummary

_COLOURS = {"ok": "32", "drift": "33", "blocked": "31", "dim": "2", "bold": "1"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def colour_enabled(stream: TextIO | None = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    stream = stream or sys.stdout
    return hasattr(stream, "isatty") and stream.isatty() and "NO_COLOR" not in os.environ


def paint(text: str, style: str, *, on: bool) -> str:
    """Wrap `text` in an ANSI style when colour is on."""
    return f"\033[{_COLOURS[style]}m{text}\033[0m" if on else text


def clean(value: object) -> str:
    """Text safe for a terminal: control characters (newlines, ESC, OSC...) shown as escapes."""
    return _CONTROL.sub(lambda m: repr(m.group(0))[1:-1], str(value))


def width(text: str) -> int:
    """Display width of `text` in a terminal (wide characters 2, combining marks 0)."""
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, cells: int) -> str:
    return text + " " * max(0, cells - width(text))


def table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    """An aligned plain-text table (cells cleaned)."""
    body = [[clean(c) for c in row] for row in rows]
    widths = [max(width(str(x)) for x in col) for col in zip(headers, *body, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(_pad(str(c), w) for c, w in zip(cells, widths, strict=False)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, body)])


def short(value: Any) -> str:
    """A difference's recorded/current value in a few characters."""
    if isinstance(value, str) and len(value) == 40 and all(c in "0123456789abcdef" for c in value):
        return value[:10]
    if isinstance(value, dict) and "path" in value:
        digest = (value.get("hash") or "missing")[:10]
        return f"{value['path']}@{digest} ({value.get('author', '?')})"
    if isinstance(value, dict):
        return str(value.get("repo_root") or value)
    return "-" if value is None else str(value)


def report_text(report: Report, *, colour: bool = False) -> str:
    """A resume report as a few short sections."""
    verdict = report.verdict
    out = [f"verdict  {paint(verdict.upper(), verdict, on=colour)}   thread {report.thread_id}"
           f"   restored to seq {report.restored_to_seq}"]
    if report.agent != "native":
        out.append(f"agent    {clean(report.agent)}")
    if report.title:
        out.append(f"title    {clean(report.title)}")
    if report.differences:
        out += ["", "differences (recorded -> now)", table(
            [[d.kind, short(d.recorded), short(d.current), d.detail] for d in report.differences],
            ["kind", "recorded", "now", "detail"])]
    if report.invalidated:
        out += ["", "invalidated"] + [f"  {i.subsystem}: {clean(i.reason)}"
                                      for i in report.invalidated]
    stale = {i.subsystem for i in report.invalidated}
    rows = [[name, sub.headline + (" (stale)" if name in stale else "")]
            for name, sub in report.subsystems.items() if sub.headline]
    if rows:
        out += ["", "restored"] + ["  " + line for line in table(rows, ["state", "value"])
                                   .splitlines()[2:]]
    if report.in_doubt_operations:
        out += ["", "operations in doubt (started, never committed: decide before re-running)"]
        out += [f"  {clean(o['operation_id'])}  {clean(o['tool'])}  (seq {o['seq']})"
                for o in report.in_doubt_operations]
    for title, items in (("quarantined tail", report.quarantined), ("damage", report.damaged),
                         ("hook failures", report.hook_failures)):
        if items:
            out += ["", title] + [f"  {_one_line(x)}" for x in items]
    if report.facts:
        out += ["", "where the facts come from"] + [
            f"  {clean(name)}: {clean(fact.get('source'))}"
            f"{', as of ' + clean(fact['as_of']) if fact.get('as_of') else ''}"
            f" ({'exact' if fact.get('exact') else 'reconstructed'})"
            for name, fact in report.facts.items() if isinstance(fact, dict)]
    if report.notes:
        out += ["", "notes"] + [f"  {clean(n)}" for n in report.notes]
    if report.switch_back:
        out += ["", f"to switch back: {clean(report.switch_back)}"]
    if report.relocate_to:
        out += ["", f"the repository is now at {clean(report.relocate_to)} "
                    "(decide relocate to continue there)"]
    if report.choices:
        out += [f"choices: {', '.join(report.choices)}"]
    if report.continued:
        out += [f"continued as session {report.session_id}"]
    return "\n".join(out)


def _one_line(item: dict[str, Any]) -> str:
    return clean("  ".join(f"{k}={v}" for k, v in item.items() if v not in (None, "")))


def threads_text(rows: Sequence[ThreadSummary]) -> str:
    """A listing of thread summaries."""
    if not rows:
        return "no threads"
    from .store.machine import host_name

    machines = {r.machine for r in rows if r.machine}
    elsewhere = bool(machines - {host_name()})  # a shared listing: say where each one ran
    body = []
    for r in rows:
        flags = " ".join(f for f in ("archived" if r.archived else "",
                                     "DAMAGED" if r.damaged else "") if f)
        where = [f"{r.os_user}@{r.machine}" if r.os_user and r.machine else r.machine or "-"]
        body.append([r.thread_id, r.agent, (r.title or "-")[:32], _tail(r.cwd), r.branch or "-",
                     *(where if elsewhere else []),
                     (r.last_activity or "")[:19].replace("T", " "),
                     f"{r.todos.done}/{r.todos.total}" if r.todos else "-",
                     f"{r.tests.passed}/{r.tests.total}" if r.tests else "-",
                     (r.state or "-") + (f" ({r.state_reason})" if r.state_reason else ""),
                     flags or "-"])
    return table(body, ["thread", "agent", "title", "cwd", "branch",
                        *(["machine"] if elsewhere else []), "last activity", "todos", "tests",
                        "resume?", "flags"])


def _tail(path: str | None, cells: int = 32) -> str:
    """A path's end, at most `cells` characters (the start elided)."""
    if not path:
        return "-"
    return path if len(path) <= cells else "…" + path[-(cells - 1):]
