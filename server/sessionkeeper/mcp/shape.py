"""What the model reads back: short, plain and redacted results.

A result is a JSON object: a few `summary` lines first (what the model should know, in words),
then the structured facts. Lists are cut at LIST_MAX entries with a count of the rest, text at
TEXT_MAX characters on one line, diffs at DIFF_MAX lines; every string passes the redactor last
(records were redacted when written; git's commit subjects and command lines were not).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, TypeVar

from ..errors import ToolInputInvalid

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
