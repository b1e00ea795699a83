"""Pre/PostToolUse into the journal: the operation ledger and file history as they happen.

    PreToolUse    edited files' content before the call (`seen`, when the session lacks it);
                  the operation `started` (id = the agent's tool_use_id / call_id, args digest),
                  durably, before the tool runs
    PostToolUse   the operation `committed` (its result when small) — `failed`, with the error,
                  for Claude Code's PostToolUseFailure; the files the tool wrote,
                  read now (content into the blob store, so a rewind can restore them); after a
                  shell call, every file that differs from the last version the session knows;
                  the todo list of a TodoWrite / update_plan; a new baseline when HEAD moved

Every record here is built from checked values (strings made str, the schema's own statuses)
and appended with `Session.record_built`: no pydantic in a tool hook. Invariants: arguments are
digested whole and kept only when small (redacted like every record);
a path outside the session's workspace is never read; one file that cannot be recorded never
keeps the others (or the operation) from being recorded.
"""

from __future__ import annotations

import json
import logging
import os
from typing import TYPE_CHECKING, Any

from ..errors import InvalidEvent
from ..session import args_digest
from .payload import EDIT_TOOLS, SHELL_TOOLS, TODO_TOOLS

if TYPE_CHECKING:
    from ..events import Record
    from ..session import Session
    from .payload import HookInput

log = logging.getLogger("sessionkeeper.hooks")

MAX_KEPT = 8192
"""Arguments and results up to this many bytes of JSON are kept in the record; larger ones are
kept as their digest."""
_PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
_DONE = {"completed": "done", "done": "done", "in_progress": "in_progress", "pending": "pending"}


def _small(value: Any) -> bool:
    try:
        return len(json.dumps(value, ensure_ascii=False)) <= MAX_KEPT
    except (TypeError, ValueError):
        return False


def _args(hook: HookInput) -> dict[str, Any]:
    value = hook.tool_input
    return value if isinstance(value, dict) else {"input": value}


def edited_paths(hook: HookInput, workspace: str) -> list[str]:
    """Workspace-relative paths a file tool (or an apply_patch input) names, inside the workspace."""
    args = _args(hook)
    names: list[str] = []
    field = EDIT_TOOLS.get(hook.tool_name or "")
    if field and isinstance(args.get(field), str):
        names.append(args[field])
    for value in args.values():
        if isinstance(value, str) and "*** Begin Patch" in value:
            names += [line[len(h):].strip() for line in value.splitlines()
                      for h in _PATCH_HEADERS if line.startswith(h)]
    out = []
    for name in names:
        full = os.path.realpath(os.path.join(hook.cwd, name))
        if os.path.commonpath([workspace, full]) == workspace and full != workspace:
            out.append(os.path.relpath(full, workspace).replace(os.sep, "/"))
    return list(dict.fromkeys(out))


def _hash(workspace: str, rel: str) -> str | None | bool:
    """The file's sha256 now (None: absent); False when it must not be read (escapes)."""
    from ..recovery.baseline import PathEscapesRoot, file_hash

    try:
        return file_hash(workspace, rel)
    except (PathEscapesRoot, OSError):
        return False


def _known(journal: Session, rel: str) -> tuple[bool, str | None]:
    """(whether the session knows the file's content, the hash it knows)."""
    from ..recovery.subsystems.file_history import FileHistory

    history = journal.state.get(FileHistory)
    last = history.last(rel)
    if last is not None:
        return not last.get("unknown"), last.get("hash")
    seen = history.seen.get(rel)
    return (True, seen.get("hash")) if seen is not None else (False, None)


def _record_files(journal: Session, paths: list[str], *, seen: bool) -> None:
    for rel in paths:
        now = _hash(journal.workspace, rel)
        if now is False:
            continue
        known, digest = _known(journal, rel)
        if known and digest == now:
            continue
        if seen and now is None:  # nothing there before the call: the file will be created
            continue
        try:
            journal.record_file(rel, seen=seen, built=True)
        except InvalidEvent as exc:  # one file never keeps the others from being recorded
            log.warning("file %s not recorded: %s", rel, exc)


def _todos(hook: HookInput) -> Record | None:
    args = _args(hook)
    items = args.get("todos") if isinstance(args.get("todos"), list) else args.get("plan")
    if not isinstance(items, list):
        return None
    todos = []
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        text = item.get("content") or item.get("step") or item.get("text")
        status = _DONE.get(str(item.get("status")), "pending")
        if isinstance(text, str) and text:
            todos.append({"id": str(item.get("id") or n + 1), "text": text, "status": status})
    ids = [t["id"] for t in todos]
    return {"type": "todo", "items": todos} if len(set(ids)) == len(ids) else None


def _shell_changes(journal: Session) -> list[str]:
    """Files that differ from what the session knows after a shell call (git's list + history)."""
    from ..recovery.file_capture import differing_files
    from ..recovery.subsystems.file_history import FileHistory

    store = str(journal.writer.store.layout.root)
    listed = list(differing_files(journal.workspace, skip=store))
    history = journal.state.get(FileHistory)
    return list(dict.fromkeys([*listed, *history.files]))


def _head_moved(journal: Session, cwd: str) -> bool:
    """Whether HEAD or the branch differ from the recorded baseline; False when that baseline is
    unreadable (nothing proves a move: the damage is left for the resume check to report)."""
    from ..recovery import gitrun
    from ..recovery.subsystems.worktree import Worktree

    try:
        recorded = journal.state.get(Worktree).recorded()
    except ValueError:
        return False
    if recorded is None or not os.path.isdir(cwd):
        return False
    head = gitrun.value(cwd, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    return (head, gitrun.branch(cwd)) != (recorded.head, recorded.branch)


def record_tool(journal: Session, hook: HookInput) -> None:
    """Record one Pre/PostToolUse call into the agent session's journal."""
    from ..events import Durability

    call, tool = str(hook.tool_use_id), str(hook.tool_name)
    args = _args(hook)
    edited = edited_paths(hook, journal.workspace)
    if hook.event == "PreToolUse":
        _record_files(journal, edited, seen=True)
        event: Record = {"type": "operation", "operation_id": call, "tool": tool,
                         "status": "started", "args_digest": args_digest(args)}
        if _small(args):
            event["args"] = args
        journal.record_built([event], durability=Durability.DURABLE)
        return
    failed = hook.event == "PostToolUseFailure"
    result = {"error": hook.error} if failed else hook.tool_response
    done: Record = {"type": "operation", "operation_id": call, "tool": tool,
                    "status": "failed" if failed else "committed",
                    "result_persisted": _small(result) and result is not None}
    if done["result_persisted"]:
        done["result"] = result
    elif result is not None:
        done["data"] = {"result_digest": args_digest(result)}
    journal.record_built([done], durability=Durability.DURABLE)
    if tool in SHELL_TOOLS:
        edited = list(dict.fromkeys([*edited, *_shell_changes(journal)]))
    _record_files(journal, edited, seen=False)
    if tool in TODO_TOOLS and not failed and (todo := _todos(hook)) is not None:
        journal.record_built([todo])
    if tool in SHELL_TOOLS and _head_moved(journal, hook.cwd):
        refresh_baseline(journal, hook.cwd)


def refresh_baseline(journal: Session, cwd: str) -> None:
    """Record the git baseline of `cwd` as it is now (where the agent runs now)."""
    from ..events import plain
    from ..recovery.baseline import capture

    now = capture(cwd) if os.path.isdir(cwd) else None
    if now is not None:
        journal.record_built([{"type": "baseline", **plain(now)}])
