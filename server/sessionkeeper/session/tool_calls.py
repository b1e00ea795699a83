"""What an agent's tool call names: the files it edits, the todo list it keeps, the kind of tool.

Shared by the tool hook (which captures the named files at the time of the call) and the fold that
turns the hook's spooled calls into journal records. Pure functions over the agent's JSON;
standard library only (a tool hook imports this).
"""

from __future__ import annotations

import os

EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}
"""Claude Code's file tools and the input field naming the file."""
SHELL_TOOLS = frozenset({"Bash", "exec_command", "shell", "shell_command", "local_shell",
                         "unified_exec"})
"""Tools that run commands (any file may change): both agents report theirs as `Bash`."""
TODO_TOOLS = frozenset({"TodoWrite", "update_plan"})
"""Tools that keep a todo list or plan."""
MAX_KEPT = 8192
"""Arguments and results up to this many bytes of JSON are kept in the record; larger ones are
kept as their digest."""
_PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
_DONE = {"completed": "done", "done": "done", "in_progress": "in_progress", "pending": "pending"}


def arguments(tool_input: object) -> dict[str, object]:
    """A call's arguments as an object (anything else is kept under `input`)."""
    return tool_input if isinstance(tool_input, dict) else {"input": tool_input}


def small(value: object) -> bool:
    """True when a value is kept whole in a record (at most MAX_KEPT bytes of JSON)."""
    import json  # here: the fold asks, a tool hook never does

    try:
        return len(json.dumps(value, ensure_ascii=False)) <= MAX_KEPT
    except (TypeError, ValueError):
        return False


def named_paths(tool_name: str | None, tool_input: object, *, cwd: str, workspace: str) -> list[str]:
    """Workspace-relative paths a file tool (or an apply_patch input) names, inside `workspace`
    (a real path); relative names are taken from `cwd`."""
    args = arguments(tool_input)
    names: list[str] = []
    field = EDIT_TOOLS.get(tool_name or "")
    if field and isinstance(args.get(field), str):
        names.append(str(args[field]))
    for value in args.values():
        if isinstance(value, str) and "*** Begin Patch" in value:
            names += [line[len(h):].strip() for line in value.splitlines()
                      for h in _PATCH_HEADERS if line.startswith(h)]
    return inside(names, cwd=cwd, workspace=workspace)


def inside(names: list[str], *, cwd: str, workspace: str) -> list[str]:
    """The names (absolute, or relative to `cwd`) that lie inside `workspace`, relative to it."""
    out = []
    for name in names:
        full = os.path.realpath(os.path.join(cwd, name))
        if os.path.commonpath([workspace, full]) == workspace and full != workspace:
            out.append(os.path.relpath(full, workspace).replace(os.sep, "/"))
    return list(dict.fromkeys(out))


def todo_record(tool_input: object) -> dict[str, object] | None:
    """The `todo` record of a TodoWrite / update_plan call, None when its list is unusable."""
    args = arguments(tool_input)
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
