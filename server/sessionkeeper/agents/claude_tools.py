"""Claude Code tool calls: the operations ledger, file edits, todos and tasks.

`tool_use` blocks start operations (id = `tool_use.id`), `tool_result` blocks with the same
`tool_use_id` commit them (or fail them when `is_error`); a call without a result by the end of
the file stays in doubt. A successful Edit / Write / MultiEdit / NotebookEdit is a `file_change`
whose content the log does not state; TodoWrite inputs, `toolUseResult.newTodos` and
TaskCreate / TaskUpdate results are the todo list.
"""

from __future__ import annotations

from typing import Any

from .translate import Record, Translator, digest, operation_id
from .vocab import relative_to, todo_items

EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}


class ClaudeTools(Translator):
    """The tool half of the Claude translator (its state keys: calls, edits, tasks, task_calls)."""

    def permissions(self) -> dict[str, Any]:
        """The permissions as they now stand (the translator knows the mode)."""
        raise NotImplementedError

    def _call(self, block: dict[str, Any], ts: str | None, tag: str | None) -> None:
        raw_id = block.get("id")
        op_id = operation_id(raw_id)
        if op_id is None:
            self.skip("tool_use:no id")
            return
        name = str(block.get("name") or "tool")
        raw = block.get("input")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        fields: Record = {"operation_id": op_id, "tool": name, "status": "started",
                          "args_digest": digest(args)}
        if op_id != raw_id:
            fields["data"] = {"tool_use_id": raw_id}
        self.state["calls"][op_id] = name
        self.emit("operation", ts, fields, tag=tag)
        if name == "TodoWrite" and isinstance(args.get("todos"), list):
            self._todos(args["todos"], ts, tag, source="claude TodoWrite input")
        elif name in EDIT_TOOLS and isinstance(args.get(EDIT_TOOLS[name]), str):
            self.state["edits"][op_id] = [name, args[EDIT_TOOLS[name]]]
        elif name in ("TaskCreate", "TaskUpdate"):
            self.state["task_calls"][op_id] = [name, {k: v for k, v in args.items()
                                                      if k in ("subject", "taskId", "status")}]

    def _result(self, block: dict[str, Any], line: dict[str, Any], ts: str | None,
                tag: str | None) -> None:
        op_id = operation_id(block.get("tool_use_id"))
        if op_id is None:
            return
        st = self.state
        failed = block.get("is_error") is True
        tool = st["calls"].pop(op_id, "unknown")
        self.emit("operation", ts, {"operation_id": op_id, "tool": tool,
                                    "status": "failed" if failed else "committed",
                                    "result_persisted": True}, tag=tag)
        raw = line.get("toolUseResult")
        result: dict[str, Any] = raw if isinstance(raw, dict) else {}
        sandboxed = line.get("sandboxed")  # Claude Code 2.1 says whether the tool ran sandboxed
        if isinstance(sandboxed, bool) and sandboxed != st["sandboxed"]:
            st["sandboxed"] = sandboxed
            if st["mode"] is not None:
                self.emit("permissions", ts, self.permissions(), tag=tag)
        if st["edits"]:
            edit = st["edits"].pop(op_id, None)
            if edit is not None and not failed:
                self.emit("file_change", ts, {
                    "path": relative_to(edit[1], st["cwd"] or ""), "author": "agent",
                    "data": {"unknown": ["after_hash"], "source": f"claude {edit[0]}",
                             "tool_use_id": op_id}}, tag=tag)
        if "newTodos" in result and isinstance(result["newTodos"], list):
            self._todos(result["newTodos"], ts, tag, source="claude toolUseResult.newTodos")
        if st["task_calls"]:
            task = st["task_calls"].pop(op_id, None)
            if task is not None and not failed:
                self._task(task[0], task[1], result, ts, tag)

    def _todos(self, items: list[Any], ts: str | None, tag: str | None, *, source: str) -> None:
        ours = todo_items(items, text_keys=("content", "subject", "text"))
        key = digest(ours)
        if key != self.state["todo_digest"]:
            self.state["todo_digest"] = key
            self.emit("todo", ts, {"items": ours, "data": {"source": source}}, tag=tag)

    def _task(self, name: str, args: dict[str, Any], result: dict[str, Any], ts: str | None,
              tag: str | None) -> None:
        tasks = self.state["tasks"]
        raw = result.get("task")
        task: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if name == "TaskCreate":
            task_id = task.get("id")
            if isinstance(task_id, (str, int)):
                tasks[str(task_id)] = {"id": str(task_id), "content": str(task.get("subject") or
                                                                          args.get("subject") or ""),
                                       "status": "pending"}
        else:
            task_id = str(args.get("taskId"))
            if task_id in tasks and args.get("status") == "deleted":
                del tasks[task_id]
            elif task_id in tasks:
                tasks[task_id].update({k: v for k, v in (("status", args.get("status")),
                                                         ("content", args.get("subject"))) if v})
        self._todos(list(tasks.values()), ts, tag, source="claude tasks (TaskCreate / TaskUpdate)")
