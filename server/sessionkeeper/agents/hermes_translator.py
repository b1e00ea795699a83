"""Hermes Agent session rows → our records: one `sessions` row and its `messages`, in id order.

Fed by `hermes_reading.py`: `session(row)` with the session's row before its new messages (cwd,
model, source context), `feed(number, message)` per message, `session_end(row)` after them
(the lifecycle facts, title, token totals). The state keeps the session row's last values, so an
appended read (new messages only) emits only what changed. A message's `content` is the model's
input and output; the session's source (platform, chat type, chat id, thread) is kept apart, in
`data.agent.source_context` of the meta, never in a message record.
"""

from __future__ import annotations

from typing import Any

import orjson

from .hermes_meta import hashed_user, hermes_meta, iso
from .translate import Record, Translator, capped, digest, one_line, operation_id, token_count
from .vocab import relative_to, set_fact, todo_items

RESETS = {"idle": "idle", "daily": "daily", "suspended": "suspended",
          "resume_pending_expired": "resume_pending_expired"}
"""Hermes end_reasons of an automatic reset by the gateway's policy (a lifecycle idle_reset)."""
ENDS = {"session_reset": ("clear", "the user reset the chat (/new or /reset)"),
        "new_command": ("clear", "the user started a new session (/new)"),
        "compression": ("compact", "context compressed: the conversation continues in a child session"),
        "branched": ("fork", "branched (/branch) into a new session")}
"""Other end_reasons with their own lifecycle source; any other ends the session (shutdown)."""
FILE_TOOLS = {"write_file": "hermes write_file", "patch": "hermes patch"}
KEPT = ("id", "source", "user_id", "chat_id", "chat_type", "thread_id", "display_name",
        "model", "parent_session_id", "started_at", "ended_at", "end_reason", "message_count",
        "tool_call_count", "cwd", "git_branch", "git_repo_root", "profile_name", "rewind_count",
        "archived", "successor")
"""The session row's columns the state keeps (what the meta, the records and a re-read need)."""


def _loads(raw: object) -> Any:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


class HermesTranslator(Translator):
    """Folds one Hermes session (its row and its messages) into records."""

    agent = "hermes"

    def initial_state(self) -> dict[str, Any]:
        """The common state plus the session row's last values and the open tool calls' names."""
        state = super().initial_state()
        state.update(native_id=None, thread_id=None, row={}, calls={}, files={}, first_prompt=None,
                     compacted_run=0, rewound=0, todo_digest=None, facts={}, top=0,
                     tokens=[0, 0, 0.0], lifecycle=None)
        return state

    # -- the session row ----------------------------------------------------------------------
    def session(self, row: dict[str, Any], *, thread_id: str) -> None:
        """Take the session row before its new messages: place, model, source (records on change)."""
        st = self.state
        st["native_id"], st["thread_id"] = row.get("id"), thread_id
        old = st["row"]
        ts = iso(row.get("started_at")) if not old else st["last_ts"]
        if ts and st["first_ts"] is None:
            st["first_ts"] = ts
        if old and (old.get("cwd"), old.get("git_branch")) != (row.get("cwd"), row.get("git_branch")) \
                and row.get("cwd"):
            cwd = row["cwd"]
            self.emit("baseline", ts, {"repo_root": row.get("git_repo_root") or cwd, "worktree": cwd,
                                       "identity": None, "branch": row.get("git_branch"), "head": None,
                                       "data": {"unknown": ["head", "dirty", "identity"]}})
        if old and row.get("model") and old.get("model") != row.get("model"):
            self.emit("model", ts, {"name": row["model"], "overrides": {}})
        kept = {k: row.get(k) for k in KEPT}
        kept["user_id"] = hashed_user(row.get("user_id"))  # the raw id never reaches our index
        kept["route"] = row.get("session_key")  # (a key named *_key reads as a secret to redaction)
        st["row"] = kept
        for name, source in (("cwd", "hermes sessions.cwd"), ("model", "hermes sessions.model")):
            if row.get(name):
                set_fact(st, name, source, iso(row.get("started_at")))
        if row.get("git_branch"):
            set_fact(st, "git", "hermes sessions.git_branch (set when a frontend started or "
                                "resumed the session)", iso(row.get("started_at")))

    def session_end(self, row: dict[str, Any]) -> None:
        """After the messages: the token totals' growth, the title, and how the session ended."""
        st = self.state
        ts = st["last_ts"] or iso(row.get("started_at"))
        before = st["tokens"]
        now = [token_count(row.get("input_tokens")), token_count(row.get("output_tokens")),
               float(row.get("actual_cost_usd") or row.get("estimated_cost_usd") or 0.0)]
        if now[0] > before[0] or now[1] > before[1]:
            self.emit("cost", ts, {"model": row.get("model") or "unknown",
                                   "input_tokens": now[0] - before[0],
                                   "output_tokens": max(0, now[1] - before[1]),
                                   "usd": round(max(0.0, now[2] - before[2]), 9),
                                   "data": {"source": "hermes sessions token totals"}})
            set_fact(st, "cost", "hermes sessions.input_tokens/output_tokens (totals)", ts)
            st["tokens"] = now
        title = row.get("title")
        if isinstance(title, str) and title.strip() and title != st.get("title"):
            st["title"] = one_line(title)
            set_fact(st, "title", "hermes sessions.title", ts)
            self.emit("title", ts, {"title": st["title"]})
        reason = row.get("end_reason")
        if isinstance(reason, str) and reason and st["lifecycle"] != reason:
            st["lifecycle"] = reason
            self._ended(reason, row)

    def _ended(self, reason: str, row: dict[str, Any]) -> None:
        ts = iso(row.get("ended_at")) or self.state["last_ts"]
        successor = row.get("successor")
        then = f"; the chat continues in session {successor}" if successor else ""
        if reason in RESETS:
            where = "/".join(str(row[k]) for k in ("source", "chat_type") if row.get(k))
            self.emit("lifecycle", ts, {"source": "idle_reset",
                                        "reason": f"hermes {RESETS[reason]} reset of a {where} chat "
                                                  f"by its reset policy{then}"})
        else:
            source, why = ENDS.get(reason, ("shutdown", f"session ended ({reason})"))
            self.emit("lifecycle", ts, {"source": source, "reason": f"hermes: {why}{then}"})

    # -- the messages -------------------------------------------------------------------------
    def feed(self, number: int, line: dict[str, Any]) -> None:
        """Fold one message row (number: how many rows of this session were fed, 1-based)."""
        st = self.state
        st["top"] = max(st["top"], int(line.get("id") or 0))
        ts = self.note_ts(iso(line.get("timestamp")))
        if line.get("active") in (0, False):
            if line.get("compacted"):
                st["compacted_run"] += 1  # history a compaction summarised: counted, not folded
            else:
                st["rewound_lines"] += 1  # rewound (/undo): Hermes keeps it inactive
            return
        if st["compacted_run"]:
            self.emit("compacted", ts, {"summary": f"[compacted by Hermes: {st['compacted_run']} "
                                                   "messages summarised]",
                                        "through_seq": st["seq"],
                                        "data": {"compacted_messages": st["compacted_run"]}})
            st["compacted_run"] = 0
        role = line.get("role")
        if role == "user":
            self._message("user", line, ts)
        elif role == "assistant":
            self._assistant(line, ts)
        elif role == "tool":
            self._tool_result(line, ts)
        elif role in ("system", "developer", "session_meta"):
            self.skip(f"message:{role}")
        else:
            self.unknown(f"message:{role}")

    def _message(self, role: str, line: dict[str, Any], ts: str | None) -> None:
        text = line.get("content")
        if not isinstance(text, str) or not text.strip():
            if role == "user":
                self.skip("message:user:empty")
            return
        if role == "user" and self.state["first_prompt"] is None:
            self.state["first_prompt"] = one_line(text)
        self.emit("message", ts, {"role": role, "text": capped(text),
                                  "message_id": f"hermes-{line.get('id')}"})

    def _assistant(self, line: dict[str, Any], ts: str | None) -> None:
        self._message("assistant", line, ts)
        calls = _loads(line.get("tool_calls"))
        if line.get("tool_calls") and not isinstance(calls, list):
            self.unmappable(0, "message:assistant:tool_calls", ValueError("tool_calls is not a JSON list"))
            return
        for call in calls or []:
            if isinstance(call, dict):
                self._call(call, ts)

    def _call(self, call: dict[str, Any], ts: str | None) -> None:
        raw_id = call.get("id") or call.get("call_id")
        op_id = operation_id(raw_id)
        if op_id is None:
            self.skip("tool_call:no id")
            return
        function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else call
        name = str(function.get("name") or "tool")
        args = function.get("arguments")
        fields: Record = {"operation_id": op_id, "tool": name, "status": "started",
                          "args_digest": digest(args)}
        if op_id != raw_id:
            fields["data"] = {"call_id": raw_id}
        self.state["calls"][op_id] = name
        parsed = _loads(args) if isinstance(args, str) else args
        path = parsed.get("path") if isinstance(parsed, dict) else None
        if name in FILE_TOOLS and isinstance(path, str) and path:
            self.state["files"][op_id] = path
        self.emit("operation", ts, fields)

    def _tool_result(self, line: dict[str, Any], ts: str | None) -> None:
        op_id = operation_id(line.get("tool_call_id"))
        if op_id is None:
            self.skip("message:tool:no call id")
            return
        st = self.state
        tool = st["calls"].pop(op_id, None) or str(line.get("tool_name") or "unknown")
        result = _loads(line.get("content"))
        failed = isinstance(result, dict) and (result.get("success") is False or bool(result.get("error")))
        self.emit("operation", ts, {"operation_id": op_id, "tool": tool,
                                    "status": "failed" if failed else "committed",
                                    "result_persisted": True})
        path = st["files"].pop(op_id, None)
        if path and not failed:
            cwd = st["row"].get("cwd") or ""
            self.emit("file_change", ts, {"path": relative_to(path, cwd), "author": "agent",
                                          "data": {"source": FILE_TOOLS.get(tool, "hermes"),
                                                   "call_id": op_id, "unknown": ["after_hash"]}})
        if tool == "todo" and isinstance(result, dict) and isinstance(result.get("todos"), list):
            items = todo_items(result["todos"], text_keys=("content", "text"))
            key = digest(items)
            if key != st["todo_digest"]:
                st["todo_digest"] = key
                self.emit("todo", ts, {"items": items, "data": {"source": "hermes todo result"}})

    # -- the session_meta ---------------------------------------------------------------------
    def meta(self) -> Record | None:
        """session_meta: ids, cwd and branch, model, source context, how the session ended."""
        return hermes_meta(self)

    def summary_fields(self) -> dict[str, Any]:
        """Ids, cwd, branch (no HEAD: Hermes records none), model, title, the parent thread."""
        st = self.state
        thread, row = st["thread_id"], st["row"]
        return {"thread_id": thread, "session_id": self.session_id_of(thread) if thread else None,
                "cwd": row.get("cwd") or "", "branch": row.get("git_branch"), "head": None,
                "model": row.get("model"), "title": self.redacted(st.get("title") or st["first_prompt"]),
                "client_version": None,
                "parent_thread_id": thread if self.file.kind == "subagent" else None}
