"""`sessionkeeper --check-resume`: the resume check for CI, headless; the exit code is the verdict.

Human summary on stdout (or `--json`); under GitHub Actions (GITHUB_ACTIONS=true) workflow
annotations go to stderr, so `--json` output stays valid JSON.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from ..errors import SessionKeeperError
from .common import emit, reader, say

if TYPE_CHECKING:
    from ..recovery.report import Report

EXIT = {"ok": 0, "drift": 10, "blocked": 11}
_LEVEL = {"ok": "notice", "drift": "warning", "blocked": "error"}


def add_top(parser: argparse.ArgumentParser) -> None:
    """The top-level options of the check (it predates subcommands and CI scripts use it so)."""
    parser.add_argument("--check-resume", nargs="?", const="", metavar="THREAD",
                        help="check whether THREAD (or --latest) would resume here; changes nothing")
    parser.add_argument("--latest", action="store_true",
                        help="with --check-resume: the workspace's newest thread")
    parser.add_argument("--workspace", default=None,
                        help="with --check-resume: the workspace (default: cwd)")
    parser.add_argument("--allow-drift", action="store_true",
                        help="with --check-resume: exit 0 on drift")
    parser.add_argument("--allow-relocation", action="store_true",
                        help="with --check-resume: exit 0 when the only difference is that the same "
                             "repository lives at another path (a CI checkout, a clone)")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Check, print, annotate; exit 0 ok · 10 drift · 11 blocked (or a typed error's code)."""
    workspace = args.workspace or os.getcwd()
    thread = args.check_resume or None
    if thread is None and not args.latest:
        parser.error("--check-resume needs a THREAD or --latest")
    from ..recovery import queries

    queries.look_ahead(workspace, queries.HEAD)  # git answers while the checker's modules load
    try:
        report = reader(args).check_resume(
            thread, workspace=workspace, latest=args.latest)
    except SessionKeeperError as exc:
        if _on_github():
            _annotate_line("error", f"Session Keeper resume check failed ({exc.name})", str(exc))
        raise
    if args.json:
        emit(report.to_json())
    else:
        from ..render import colour_enabled, report_text

        say(report_text(report, colour=colour_enabled()))
    if _on_github():
        annotate(report)
    code = EXIT[report.verdict]
    relocated_only = all(d.kind == "relocated" for d in report.differences)
    if code == EXIT["drift"] and (args.allow_drift or (args.allow_relocation and relocated_only)):
        return 0
    return code


def _on_github() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _annotate_line(level: str, title: str, message: str, *, file: str | None = None,
                   line: int | None = None) -> None:
    props = [f"title={_prop(title)}"]
    if file:
        props.insert(0, f"file={_prop(file)}")
        if line:
            props.insert(1, f"line={line}")
    sys.stderr.write(f"::{level} {','.join(props)}::{_data(message)}\n")


def annotate(report: Report) -> None:
    """GitHub workflow annotations for a report: the verdict, then one per file or damage."""
    from ..render import short

    level = _LEVEL[report.verdict]
    summary = "; ".join(f"{d.kind}: {short(d.recorded)} -> {short(d.current)}"
                        for d in report.differences) or "environment identical"
    _annotate_line(level, f"Session Keeper resume {report.verdict}",
                   f"thread {report.thread_id}: {summary}")
    for d in report.differences:
        path = d.recorded.get("path") if isinstance(d.recorded, dict) else None
        if path:
            _annotate_line(level, f"Session Keeper: {d.kind}", d.detail or d.kind, file=path)
    for damage in report.damaged:
        where = f"line {damage.get('line')}" if damage.get("line") else "a line"
        _annotate_line("error", "Session Keeper: damaged log",
                       f"{damage.get('kind')} at {where} of session {damage.get('session_id')}: "
                       f"{damage.get('reason')}")
