"""Codex rollout lines → our records: the translator a Codex file is read with.

Imported by `CodexAgent.translator` when a file is parsed (a listing that only stats files never
loads it). The field-by-field mapping is in MAPPING.md beside this file.
"""

from __future__ import annotations

import re
from typing import Any

from .base import canonical_uuid
from .codex_meta import (
    as_int,
    change_kind,
    codex_meta,
    failed,
    git_block,
    harness,
    loads,
    sandbox_name,
    str_field,
)
from .translate import (
    Record,
    Translator,
    capped,
    digest,
    one_line,
    operation_id,
    text_of,
)
from .vocab import as_text, new_facts, patch_paths, permissions, relative_to, set_fact, todo_items

_SKIPPED_ITEMS = frozenset({"reasoning", "web_search_call", "tool_search_call", "tool_search_output",
                            "image_generation_call", "ghost_snapshot"})
_KNOWN_TOP = frozenset({"world_state", "inter_agent_communication_metadata"})
_CONTEXT_CWD = re.compile(r"<cwd>([^<\n]+)</cwd>")


class CodexTranslator(Translator):
    """Codex rollout lines → our records."""

    agent = "codex"

    def initial_state(self) -> dict[str, Any]:
        """The base state plus Codex's per-thread context."""
        state = super().initial_state()
        state.update(thread_id=None, ids={}, meta_ts=None, meta_cwd=None, cwd=None, git=None,
                     client=None, origin={}, forked_from=None, model=None, overrides={},
                     permissions=None, title=None, first_prompt=None, usage_source=None,
                     last_total=None, calls={}, patches={}, todo_digest=None, facts=new_facts(),
                     raw_permissions=None,
                     inherited_meta=0)
        return state

    def feed(self, number: int, line: dict[str, Any]) -> None:
        """Fold one rollout line."""
        raw_kind = line.get("type")
        kind = raw_kind if isinstance(raw_kind, str) else "(no type)"
        payload = line.get("payload")
        ts = self.note_ts(line.get("timestamp"))
        if payload is None and ("type" not in line or "timestamp" not in line):
            self._bare(line, ts)  # written before the {timestamp, type, payload} envelope
            return
        if not isinstance(payload, dict):
            self.unknown(kind if payload is None else f"{kind}:non-object payload")
            return
        handler = _HANDLERS.get(str(kind))
        if handler is not None:
            handler(self, payload, ts)
        elif kind in _KNOWN_TOP:
            self.skip(str(kind))
        else:
            self.unknown(str(kind))

    def _bare(self, line: dict[str, Any], ts: str | None) -> None:
        """A line of the bare era (Codex before ~Sept 2025): the header is the SessionMeta itself
        (no cwd: the first <environment_context> gives it), items are bare ResponseItems, and
        `{"record_type": "state"}` marks saved state."""
        if "type" in line:
            self._response_item(line, ts)
        elif "record_type" in line:
            self.skip("bare:record_type")
        elif "id" in line:
            self._session_meta(line, ts)
        else:
            self.unknown("(no type)")

    # -- line types ----------------------------------------------------------------------------
    def _session_meta(self, p: dict[str, Any], ts: str | None) -> None:
        st = self.state
        tid = canonical_uuid(p.get("id"))
        if tid is None:
            self.skip("session_meta:no id")
            return
        if st["thread_id"] is None:
            cwd = str_field(p.get("cwd"))
            st.update(thread_id=tid, meta_ts=str_field(p.get("timestamp")) or ts, meta_cwd=cwd,
                      cwd=st["cwd"] or cwd, git=git_block(p.get("git")),
                      client=str_field(p.get("cli_version")),
                      forked_from=canonical_uuid(p.get("forked_from_id")))
            st["ids"] = {"id": tid, "session_id": canonical_uuid(p.get("session_id")) or tid}
            st["origin"] = {k: p[k] for k in ("originator", "source", "thread_source",
                                              "model_provider", "agent_nickname", "agent_role")
                            if p.get(k) is not None}
            set_fact(st, "git", "codex session_meta.git (creation time only)", st["meta_ts"])
            set_fact(st, "cwd", "codex session_meta.cwd", st["meta_ts"])
        elif tid == st["thread_id"]:  # written again by a newer CLI that resumed the thread
            st["client"] = str_field(p.get("cli_version")) or st["client"]
        else:
            st["inherited_meta"] += 1  # a fork replays its parent's history, header included
            self.skip("session_meta:inherited")

    def _turn_context(self, p: dict[str, Any], ts: str | None) -> None:
        st = self.state
        if isinstance(p.get("cwd"), str) and p["cwd"]:
            st["cwd"] = p["cwd"]
            set_fact(st, "cwd", "codex turn_context.cwd", ts)
        approval = p.get("approval_policy")
        sandbox = p.get("sandbox_policy")
        if approval is not None or sandbox is not None:
            raw = {"approval_policy": as_text(approval) if approval is not None else None,
                   "sandbox_policy": sandbox_name(sandbox) if sandbox is not None else None}
            perms = permissions(raw["approval_policy"], raw["sandbox_policy"])
            st["raw_permissions"] = raw
            if perms != st["permissions"]:
                st["permissions"] = perms
                self.emit("permissions", ts, dict(perms))
            set_fact(st, "permissions", "codex turn_context approval_policy / sandbox_policy", ts)
        model = p.get("model")
        if isinstance(model, str) and model:
            effort = p.get("effort") or ((p.get("collaboration_mode") or {}).get("settings") or {}).get(
                "reasoning_effort")
            overrides = {"effort": effort} if isinstance(effort, str) else {}
            if (model, overrides) != (st["model"], st["overrides"]):
                st["model"], st["overrides"] = model, overrides
                self.emit("model", ts, {"name": model, "overrides": dict(overrides)})
            set_fact(st, "model", "codex turn_context.model", ts)

    def _response_item(self, p: dict[str, Any], ts: str | None) -> None:
        kind = p.get("type")
        if kind == "message":
            self._message(p, ts)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            self._call(p, ts)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(p, ts)
        elif kind in _SKIPPED_ITEMS:
            self.skip(f"response_item:{kind}")
        else:
            self.unknown(f"response_item:{kind}")

    def _message(self, p: dict[str, Any], ts: str | None) -> None:
        role = p.get("role")
        text = text_of(p.get("content"))
        if role not in ("user", "assistant") or not text.strip():
            self.skip(f"response_item:message:{role}")
            return
        if role == "user":
            if harness(p, text):
                if self.state["cwd"] is None and (found := _CONTEXT_CWD.search(text)):
                    self.state["cwd"] = found.group(1).strip()  # a header without cwd (bare era)
                    set_fact(self.state, "cwd", "codex <environment_context> of a user message", ts)
                self.skip("response_item:message:harness")
                return
            self._prompt(text)
        mid = p.get("id") if isinstance(p.get("id"), str) else None
        self.emit("message", ts, {"role": role, "text": capped(text), "message_id": mid})

    def _prompt(self, text: str) -> None:
        if self.state["first_prompt"] is None and text.strip():
            self.state["first_prompt"] = one_line(text)

    def _call(self, p: dict[str, Any], ts: str | None) -> None:
        raw_id = p.get("call_id") or p.get("id")
        op_id = operation_id(raw_id)
        if op_id is None:
            self.skip(f"response_item:{p.get('type')}:no call id")
            return
        name = str(p.get("name") or ("local_shell" if p.get("type") == "local_shell_call" else "tool"))
        args = p.get("arguments") if "arguments" in p else p.get("input", p.get("action"))
        fields: Record = {"operation_id": op_id, "tool": name, "status": "started",
                          "args_digest": digest(args)}
        if op_id != raw_id:
            fields["data"] = {"call_id": raw_id}
        self.state["calls"][op_id] = name
        self.emit("operation", ts, fields)
        if name == "update_plan":
            self._plan(args, ts)
        elif name == "apply_patch":
            patch = args
            if isinstance(args, str) and args.lstrip().startswith("{"):
                patch = (loads(args) or {}).get("input", args)
            self.state["patches"][op_id] = patch_paths(patch if isinstance(patch, str) else "")

    def _plan(self, args: object, ts: str | None) -> None:
        plan = (loads(args) if isinstance(args, str) else args) or {}
        steps = plan.get("plan") if isinstance(plan, dict) else None
        if not isinstance(steps, list):
            return
        items = todo_items(steps, text_keys=("step", "content"))
        key = digest(items)
        if key != self.state["todo_digest"]:
            self.state["todo_digest"] = key
            self.emit("todo", ts, {"items": items, "data": {"source": "codex update_plan"}})

    def _output(self, p: dict[str, Any], ts: str | None) -> None:
        raw_id = p.get("call_id")
        op_id = operation_id(raw_id)
        if op_id is None:
            self.skip(f"response_item:{p.get('type')}:no call id")
            return
        tool = self.state["calls"].pop(op_id, "unknown")
        self.emit("operation", ts, {"operation_id": op_id, "tool": tool, "status": "committed",
                                    "result_persisted": True})
        paths = self.state["patches"].pop(op_id, None)
        if paths and not failed(p.get("output")):
            for path, action in paths:
                self._file_change(path, ts, source="codex apply_patch input", call_id=op_id,
                                  deleted=action == "delete")

    def _event_msg(self, p: dict[str, Any], ts: str | None) -> None:
        kind = p.get("type")
        if kind == "user_message" and isinstance(p.get("message"), str):
            self._prompt(p["message"])
            self.skip("event_msg:user_message")
        elif kind == "thread_name_updated":
            name = p.get("thread_name") or p.get("name")
            if isinstance(name, str) and name.strip():
                self.state["title"] = one_line(name)
                set_fact(self.state, "title", "codex thread_name_updated", ts)
                self.emit("title", ts, {"title": self.state["title"]})
        elif kind == "patch_apply_end":
            self._patch_end(p, ts)
        elif kind == "token_count":
            self._token_count(p, ts)
        else:
            if kind == "item_completed":
                item = p.get("item") or {}
                if isinstance(item, dict) and item.get("type") == "UserMessage":
                    self._prompt(text_of(item.get("content")))
            self.skip(f"event_msg:{kind}")

    def _patch_end(self, p: dict[str, Any], ts: str | None) -> None:
        op_id = operation_id(p.get("call_id"))
        if op_id is not None:
            self.state["patches"].pop(op_id, None)  # the event says exactly what changed
        changes = p.get("changes")
        if p.get("success") is False or not isinstance(changes, dict):
            return
        for path, change in changes.items():
            kind, moved = change_kind(change)
            if kind == "delete" or moved:
                self._file_change(path, ts, source="codex patch_apply_end", call_id=op_id, deleted=True)
            if kind != "delete":
                self._file_change(moved or path, ts, source="codex patch_apply_end", call_id=op_id)

    def _file_change(self, path: str, ts: str | None, *, source: str, call_id: str | None,
                     deleted: bool = False) -> None:
        data: dict[str, Any] = {"source": source, "call_id": call_id}
        if not deleted:  # the log never says what the file holds afterwards
            data["unknown"] = ["after_hash"]
        cwd = self.state["cwd"] or self.state["meta_cwd"] or ""
        fields: Record = {"path": relative_to(path, cwd), "author": "agent", "data": data}
        if deleted:
            fields["deleted"] = True  # no after_hash: the file must be absent
        self.emit("file_change", ts, fields)

    def _token_count(self, p: dict[str, Any], ts: str | None) -> None:
        st = self.state
        info = p.get("info")
        if st["usage_source"] == "token_usage_record" or not isinstance(info, dict):
            self.skip("event_msg:token_count")
            return
        total, last = info.get("total_token_usage"), info.get("last_token_usage")
        if total is not None and total == st["last_total"]:
            return  # the same totals again (a rate-limit update): no new model call
        st["last_total"] = total
        usage = last if isinstance(last, dict) else total
        if isinstance(usage, dict):
            st["usage_source"] = "token_count"
            self._cost(usage, ts, model=info.get("model"))

    def _token_usage_record(self, p: dict[str, Any], ts: str | None) -> None:
        self.state["usage_source"] = "token_usage_record"
        if isinstance(p.get("usage"), dict):
            self._cost(p["usage"], ts, model=None)

    def _cost(self, usage: dict[str, Any], ts: str | None, *, model: object) -> None:
        name = model if isinstance(model, str) and model else self.state["model"] or "unknown"
        extra = {k: usage[k] for k in ("cached_input_tokens", "reasoning_output_tokens")
                 if isinstance(usage.get(k), int)}
        self.emit("cost", ts, {"model": name, "input_tokens": as_int(usage.get("input_tokens")),
                               "output_tokens": as_int(usage.get("output_tokens")), "usd": 0.0,
                               "data": {"source": f"codex {self.state['usage_source']}", **extra}})
        set_fact(self.state, "cost", f"codex {self.state['usage_source']} (tokens; no price)", ts)

    def _compacted(self, p: dict[str, Any], ts: str | None) -> None:
        history = p.get("replacement_history")
        items = len(history) if isinstance(history, list) else 0
        message = p["message"] if isinstance(p.get("message"), str) else ""
        summary = capped(message) if message.strip() else f"[compacted by Codex: {items} items kept]"
        self.emit("compacted", ts, {"summary": summary, "through_seq": self.state["seq"],
                                    "data": {"replacement_items": items}})

    # -- the session_meta this file stands for ------------------------------------------------
    def meta(self) -> Record | None:
        """session_meta: ids, latest cwd, creation-time git, latest permissions and model."""
        return codex_meta(self)

    def summary_fields(self) -> dict[str, Any]:
        """Ids, latest cwd, branch and HEAD of the creation-time git block, model, title, version."""
        st = self.state
        thread, git = st["thread_id"], st["git"] or {}
        return {"thread_id": thread, "session_id": self.session_id_of(thread) if thread else None,
                "cwd": st["cwd"] or "", "branch": git.get("branch"), "head": git.get("commit_hash"),
                "model": st["model"], "title": self.redacted(st["title"] or st["first_prompt"]),
                "client_version": st["client"]}


_HANDLERS = {
    "session_meta": CodexTranslator._session_meta,
    "turn_context": CodexTranslator._turn_context,
    "response_item": CodexTranslator._response_item,
    "event_msg": CodexTranslator._event_msg,
    "compacted": CodexTranslator._compacted,
    "token_usage_record": CodexTranslator._token_usage_record,
}
