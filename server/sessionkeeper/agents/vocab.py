"""Small mappings shared by the agent translators: todo items, patch paths, paths, facts, URLs.

Pure functions of their inputs; nothing here reads a file or imports pydantic.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, get_args

import orjson

from ..events import ApprovalMode, SandboxPolicy

APPROVAL_MODES = frozenset(get_args(ApprovalMode))
SANDBOX_POLICIES = frozenset(get_args(SandboxPolicy))
_USERINFO = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@")
_PATCH_LINE = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): (.+)$", re.M)
_DONE = frozenset({"completed", "complete", "done"})


def as_text(value: object) -> str:
    """A setting as a short string (JSON for a structured one)."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return repr(value)[:200]


def todo_items(items: list[Any], *, text_keys: tuple[str, ...]) -> list[dict[str, str]]:
    """An agent's todo / plan list as our TodoItem dicts {id, text, status}."""
    out: list[dict[str, str]] = []
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            continue
        text = next((item[k] for k in text_keys if isinstance(item.get(k), str)), "")
        status = str(item.get("status", "pending")).lower()
        ours = "done" if status in _DONE else "in_progress" if status == "in_progress" else "pending"
        raw_id = item.get("id")
        out.append({"id": str(raw_id) if isinstance(raw_id, (str, int)) else str(index),
                    "text": text, "status": ours})
    return out


def patch_paths(patch: str) -> list[list[str]]:
    """[[path, "write" | "delete"], ...] named by an apply_patch text (a move deletes the source)."""
    out: list[list[str]] = []
    for action, path in _PATCH_LINE.findall(patch):
        path = path.strip()
        if action == "Delete File":
            out.append([path, "delete"])
        elif action == "Move to":
            if out:
                out[-1][1] = "delete"
            out.append([path, "write"])
        else:
            out.append([path, "write"])
    return out


def relative_to(path: str, cwd: str) -> str:
    """`path` relative to `cwd` when it lies inside it (as file history keys files), else as given."""
    if not posixpath.isabs(path) or not cwd:
        return path
    base = cwd.rstrip("/")
    if path == base:
        return "."
    if path.startswith(base + "/"):
        return path[len(base) + 1:]
    return path


def redact_url(url: object) -> str | None:
    """A remote URL without user:password (credentials never reach our records)."""
    if not isinstance(url, str) or not url.strip():
        return None
    return _USERINFO.sub(r"\1", url.strip())


def new_facts() -> dict[str, Any]:
    """An empty table of facts: name -> {source, as_of}."""
    return {}


def set_fact(state: dict[str, Any], name: str, source: str, as_of: str | None) -> None:
    """Say where a fact came from in the agent's log and how old it is."""
    state["facts"][name] = {"source": source, "as_of": as_of}


def permissions(approval: object, sandbox: object) -> dict[str, Any]:
    """Our permissions from an agent's settings: only the values our vocabulary can state.

    A value outside it (a newer policy, a granular one) is left out, so the permissions subsystem
    keeps its default for it, and the caller lists the field in `data.unknown`.
    """
    out: dict[str, Any] = {"tool_profile": "unknown"}
    if approval in APPROVAL_MODES:
        out["approval_mode"] = approval
    if sandbox in SANDBOX_POLICIES:
        out["sandbox_policy"] = sandbox
    return out


def unknown_permissions(perms: dict[str, Any] | None) -> list[str]:
    """The permission fields an agent's log did not state in our vocabulary."""
    perms = perms or {}
    return [k for k in ("approval_mode", "sandbox_policy") if k not in perms] + ["tool_profile"]
