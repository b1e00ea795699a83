"""What the model reads back: short, plain and redacted results (and the words of each tool's).

A result is a JSON object: a few `summary` lines first (what the model should know, in words),
then the structured facts. Lists are cut at LIST_MAX entries with a count of the rest, text at
TEXT_MAX characters on one line, diffs at DIFF_MAX lines; every string passes the redactor last
(records were redacted when written; git's commit subjects and command lines were not).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import ToolInputInvalid

if TYPE_CHECKING:
    from ..keeper.rewinding import RewindReport

LIST_MAX = 20
TEXT_MAX = 200
DIFF_MAX = 200
T = TypeVar("T")


def flat(value: object, limit: int = TEXT_MAX) -> str:
    """`value` as one line of at most `limit` characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def sha(value: object) -> str | None:
    """A commit or content hash shortened to 10 characters (None stays None)."""
    return str(value)[:10] if isinstance(value, str) and value else None


def capped(items: Sequence[T], limit: int = LIST_MAX) -> tuple[list[T], int]:
    """The first `limit` items and how many were left out."""
    return list(items[:limit]), max(len(items) - limit, 0)


def lines_capped(text: str, limit: int = DIFF_MAX) -> str:
    """A text of at most `limit` lines, saying how many more there were."""
    lines = text.splitlines(keepends=True)
    if len(lines) <= limit:
        return text
    return "".join(lines[:limit]) + f"… ({len(lines) - limit} more line(s))\n"


def finished(result: dict[str, Any]) -> dict[str, Any]:
    """The result as the model gets it: every string redacted."""
    from ..redact import redact_value

    out = redact_value(result)
    assert isinstance(out, dict)
    return out


def workspace_path(workspace: str, path: str) -> str:
    """`path` (absolute, or relative to the workspace) as a workspace-relative path;
    ToolInputInvalid when it is empty, names the workspace itself or lies outside it."""
    from ..recovery.subsystems.file_history import norm_path

    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise ToolInputInvalid(f"path {str(path)[:80]!r} is not a file path")
    roots = dict.fromkeys([os.path.abspath(workspace), os.path.realpath(workspace)])
    for root in roots:
        full = os.path.normpath(path if os.path.isabs(path) else os.path.join(root, path))
        for candidate in dict.fromkeys([full, os.path.realpath(full)]):
            rel = os.path.relpath(candidate, root)
            if rel != os.curdir and rel != os.pardir and not rel.startswith(os.pardir + os.sep):
                return norm_path(rel.replace(os.sep, "/"))
    raise ToolInputInvalid(f"path {flat(path, 120)} is outside the session's workspace "
                           f"{os.path.abspath(workspace)}")


def args_shown(args: object) -> object:
    """A tool call's arguments as the model sees them again: strings on one line, cut short."""
    if isinstance(args, dict):
        return {str(k): args_shown(v) for k, v in list(args.items())[:12]}
    if isinstance(args, list):
        return [args_shown(v) for v in args[:12]]
    if isinstance(args, str):
        return flat(args, 300)
    return args


def check_before_rerun(tool: str, args: object, changed: list[str]) -> str:
    """What to check before running an unfinished tool call again."""
    from ..hooks.payload import EDIT_TOOLS, SHELL_TOOLS

    shown = args if isinstance(args, dict) else {}
    files = f" Files changed since it started: {', '.join(changed[:8])}." if changed else \
        " No file the session knows changed since it started."
    if tool in SHELL_TOOLS:
        command = shown.get("command") or shown.get("cmd")
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        what = f"`{flat(command, 120)}`" if command else "the command"
        return (f"{what} may have run in part or in full before it was cut off: check its "
                "effects (the files it writes, git status, processes it started) before running "
                "it again; do not repeat a deploy, a migration or a push blindly." + files)
    if tool in EDIT_TOOLS:
        target_file = shown.get(EDIT_TOOLS[tool])
        return (f"re-read {flat(target_file, 120)}: the edit may already be in it." + files)
    return "check whether it took effect before calling it again." + files


def not_allowed(note: str | None) -> str:
    """Why rewind refuses, and how the user allows it."""
    from .policy import ENV, GIT_KEY

    return ("rewind is off for agents (the default): tell the user what you would rewind; they "
            f"can allow it with `git config {GIT_KEY} allow` (or {ENV}=allow)"
            + (f"; {note}" if note else ""))


def rewound(report: RewindReport, to_seq: int | None, *, dry_run: bool) -> dict[str, Any]:
    """A rewind's (or its preview's) steps and summary lines."""
    rows = [{"path": r["path"], "action": r["action"], "outcome": r["outcome"],
             "reason": flat(r["reason"], 240)} for r in report.steps()]
    shown, more = capped(rows)
    verb = "would" if dry_run else "did"
    what = f"undo of the rewind at seq {report.undo_of}" if report.undo_of is not None \
        else f"rewind to seq {to_seq}"
    summary = [f"{what}{' (preview: nothing changed)' if dry_run else ''}: "
               + (", ".join(f"{r['path']} {r['outcome'] or r['action']}" for r in shown[:8])
                  or "no file of the session's history")]
    refused = [r for r in rows if r["action"] in ("refused", "unavailable")]
    summary += [f"{r['path']}: {verb} not rewind — {r['reason']}" for r in refused[:5]]
    if not dry_run and report.rewind_seq is not None and report.undo_available:
        summary.append("undo it with rewind(undo=true)")
    return {"summary": summary, "to_seq": to_seq, "dry_run": dry_run, "complete": report.complete,
            "rewind_seq": report.rewind_seq, "undo_of": report.undo_of, "steps": shown,
            **({"more": more} if more else {})}
