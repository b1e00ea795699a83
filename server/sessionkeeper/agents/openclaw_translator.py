"""OpenClaw transcript events → our records: the translator a session window (or a legacy
`<id>.jsonl` transcript) is read with.

Events (the same JSON in the SQLite store and in JSONL transcripts): a `session` header (`id`,
`cwd`, `timestamp`, `version`), then entries with `id` / `parentId`: `message` (role user,
assistant — text and `toolCall` blocks, `usage` — or toolResult), `model_change`,
`thinking_level_change`, `compaction`, `reset`, `custom` / `custom_message` (extension state),
`branch_summary`. Events are folded in seq order (the tree is not pruned: OpenClaw rewrites a
window and bumps its generation when it rewinds, and that is a full read). OpenClaw records no
git state and no approval policy: those facts are `unknown`. The mapping is in MAPPING.md.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from ..events import SCHEMA_VERSION
from .base import AGENT_NAMESPACE, AgentFile, canonical_uuid
from .openclaw_store import split, valid_session_id
from .translate import MESSAGE_CAP, Record, Translator, capped, digest, one_line, operation_id, token_count
from .vocab import permissions, relative_to, unknown_permissions

_SKIPPED = frozenset({"thinking_level_change", "custom", "custom_message", "branch_summary", "label",
                      "session_info"})
_EDITS = frozenset({"write", "edit"})


def thread_of(session_id: str, agent_id: str) -> str:
    """Our thread id of an OpenClaw session: its id when a UUID (what OpenClaw makes), else a
    uuid5 of its `{agentId}:{sessionId}` scope."""
    return canonical_uuid(session_id.lower()) or str(uuid.uuid5(AGENT_NAMESPACE,
                                                                f"openclaw:{agent_id}:{session_id}"))


class OpenClawTranslator(Translator):
    """OpenClaw transcript events → our records."""

    agent = "openclaw"

    def initial_state(self) -> dict[str, Any]:
        """The base state plus the session's scope, place, model, calls and window facts."""
        state = super().initial_state()
        state.update(thread_id=None, oc_session=None, agent_id=_agent_id(self.file), cwd=None,
                     version=None, model=None, provider=None, first_prompt=None, calls={},
                     facts={}, window={}, resets=[], parent_session=None, cwd_ts=None,
                     model_ts=None, cost_ts=None, invalid_id=None, app_version=None)
        if in_store(self.file):
            state["oc_session"] = split(str(self.file.path))[1]
        return state

    def feed(self, number: int, line: dict[str, Any]) -> None:
        """Fold one event."""
        kind = line.get("type")
        ts = line.get("timestamp")
        st = self.state
        if ts.__class__ is str and ts:  # note_ts, inline: every event has one
            if st["first_ts"] is None:
                st["first_ts"] = ts
            st["last_ts"] = ts
        else:
            ts = st["last_ts"]
        if kind == "message":
            message = line.get("message")
            if not isinstance(message, dict):
                self.skip("message:no message")
                return
            role = message.get("role")
            tag = line.get("id") if isinstance(line.get("id"), str) else None
            if role == "user":
                self._user(message, ts, tag)
            elif role == "assistant":
                self._assistant(message, ts, tag)
            elif role == "toolResult":
                self._result(message, ts)
            else:
                self.skip(f"message:{role}")
        elif kind == "session":
            self._header(line, ts)
        elif kind == "model_change":
            self._model(line.get("provider"), line.get("modelId"), ts)
        elif kind == "compaction":
            summary = line.get("summary")
            self.emit("compacted", ts, {
                "summary": capped(summary) if isinstance(summary, str) and summary.strip()
                else "[compacted by OpenClaw]", "through_seq": self.state["seq"],
                "data": {"source": "openclaw compaction", "tokens_before": line.get("tokensBefore")}})
        elif kind == "reset":
            self.skip("reset")
            self.state["resets"].append(ts)  # a fresh history window inside the same session id
            del self.state["resets"][:-10]
        elif kind in _SKIPPED:
            self.skip(kind if kind != "custom" else f"custom:{line.get('customType')}")
        else:
            self.unknown(kind if isinstance(kind, str) else "(no type)")

    # -- identity, place, model ----------------------------------------------------------------
    def _header(self, line: dict[str, Any], ts: str | None) -> None:
        st = self.state
        sid = line.get("id")
        if isinstance(sid, str) and st["oc_session"] is None:
            st["oc_session"] = sid
        cwd = line.get("cwd")
        if isinstance(cwd, str) and cwd:
            st["cwd"], st["cwd_ts"] = cwd, ts
        if isinstance(line.get("version"), int):
            st["version"] = line["version"]
        if isinstance(line.get("parentSession"), str):
            st["parent_session"] = line["parentSession"]
        self.skip("session")

    def _model(self, provider: object, model: object, ts: str | None) -> None:
        st = self.state
        if isinstance(model, str) and model and model != st["model"]:
            st["model"] = model
            st["provider"] = provider if isinstance(provider, str) else st["provider"]
            overrides = {"provider": st["provider"]} if st["provider"] else {}
            self.emit("model", ts, {"name": model, "overrides": overrides})
        if isinstance(model, str) and model:
            st["model_ts"] = ts

    # -- conversation and tools ------------------------------------------------------------
    def _user(self, message: dict[str, Any], ts: str | None, tag: str | None) -> None:
        content = message.get("content")
        text = content if isinstance(content, str) else _texts(content)
        if not text.strip():
            return
        if self.state["first_prompt"] is None:
            self.state["first_prompt"] = one_line(text)
        self.emit("message", ts, {"role": "user", "text": capped(text, MESSAGE_CAP), "message_id": tag})

    def _assistant(self, message: dict[str, Any], ts: str | None, tag: str | None) -> None:
        model = message.get("model")
        if model != self.state["model"]:
            self._model(message.get("provider"), model, ts)
        elif model:
            self.state["model_ts"] = ts
        usage = message.get("usage")
        if usage.__class__ is dict:
            self._usage(model, usage, ts)
        content = message.get("content")
        texts = []
        for block in content if content.__class__ is list else ():
            if block.__class__ is dict:
                kind = block.get("type")
                if kind == "text":
                    if block.get("text").__class__ is str:
                        texts.append(block["text"])
                elif kind == "toolCall":
                    self._call(block, ts, tag)
        text = content if isinstance(content, str) else "\n".join(texts)
        if text and not text.isspace():
            self.emit("message", ts, {"role": "assistant", "text": capped(text, MESSAGE_CAP),
                                      "message_id": tag})

    def _usage(self, model: object, usage: dict[str, Any], ts: str | None) -> None:
        cost = usage.get("cost")
        usd = cost.get("total") if cost.__class__ is dict else None
        self.emit("cost", ts, {
            "model": model if isinstance(model, str) and model else "unknown",
            "input_tokens": token_count(usage.get("input")) + token_count(usage.get("cacheRead"))
            + token_count(usage.get("cacheWrite")),
            "output_tokens": token_count(usage.get("output")),
            "usd": float(usd) if isinstance(usd, (int, float)) and usd >= 0 else 0.0,
            "data": {"source": "openclaw message.usage",
                     "cached_input_tokens": token_count(usage.get("cacheRead"))}})
        self.state["cost_ts"] = ts

    def _call(self, block: dict[str, Any], ts: str | None, tag: str | None) -> None:
        raw = block.get("id")
        op = operation_id(raw)
        if op is None:
            self.skip("toolCall:no id")
            return
        name = str(block.get("name") or "tool")
        args = block.get("arguments")
        fields: Record = {"operation_id": op, "tool": name, "status": "started", "args_digest": digest(args)}
        if op != raw:
            fields["data"] = {"tool_call_id": raw}
        path = args.get("path") if isinstance(args, dict) and name in _EDITS else None
        self.state["calls"][op] = [name, path if isinstance(path, str) else None]
        self.emit("operation", ts, fields, tag=tag)

    def _result(self, message: dict[str, Any], ts: str | None) -> None:
        op = operation_id(message.get("toolCallId"))
        if op is None or op not in self.state["open_ops"]:
            self.skip("toolResult:unknown call")
            return
        name, path = self.state["calls"].pop(op, [message.get("toolName") or "tool", None])
        failed = message.get("isError") is True
        self.emit("operation", ts, {"operation_id": op, "tool": str(name),
                                    "status": "failed" if failed else "committed"})
        if path and not failed:
            cwd = self.state["cwd"] or ""
            self.emit("file_change", ts, {"path": relative_to(path, cwd) if cwd else path,
                                          "author": "agent", "data": {"unknown": ["after_hash"]}})

    # -- the session as it stands ----------------------------------------------------------
    def thread(self) -> str | None:
        """Our thread id (None without a session id, or with one failing OpenClaw's rule)."""
        st = self.state
        sid = st["oc_session"]
        if not isinstance(sid, str) or not valid_session_id(sid):
            st["invalid_id"] = sid if isinstance(sid, str) else None
            return None
        return thread_of(sid.strip(), st["agent_id"] or "main")

    def scope(self) -> str | None:
        """OpenClaw's `{agentId}:{sessionId}` scope of the session."""
        sid = self.state["oc_session"]
        return f"{self.state['agent_id'] or 'main'}:{sid}" if isinstance(sid, str) else None

    def title(self) -> str | None:
        """The window's label or display name, else the first prompt."""
        window = self.state["window"]
        label = window.get("title") if isinstance(window, dict) else None
        return one_line(label) if isinstance(label, str) and label.strip() else self.state["first_prompt"]

    def meta(self) -> Record | None:
        """session_meta: ids and scope, cwd (no git: OpenClaw records none), model, window facts."""
        st = self.state
        thread = self.thread()
        if thread is None:
            return None
        perms = permissions(None, None)
        facts = dict(st["facts"])
        if st["cwd"]:
            facts["cwd"] = {"source": "openclaw session header cwd", "as_of": st["cwd_ts"]}
        if st["model_ts"]:
            facts["model"] = {"source": "openclaw model_change / assistant message.model",
                              "as_of": st["model_ts"]}
        if st["cost_ts"]:
            facts["cost"] = {"source": "openclaw message.usage", "as_of": st["cost_ts"]}
        window = dict(st["window"]) if isinstance(st["window"], dict) else {}
        agent: dict[str, Any] = {
            "name": "openclaw", "path": str(self.file.path), "kind": self.file.kind,
            "scope": self.scope(), "agent_id": st["agent_id"], "session_id": st["oc_session"],
            "session_key": window.get("route"), "chat_type": window.get("chat_type"),
            "channel": window.get("channel"), "window_reason": window.get("reason"),
            "previous_session_id": window.get("previous_session_id"),
            "superseded_by": _superseded(window, st["oc_session"]),
            "archived": bool(window.get("archived")), "resets": list(st["resets"]),
            "transcript_version": st["version"], "parent_session": st["parent_session"]}
        agent["notes"] = _lifecycle_notes(agent)
        return {
            "seq": 0, "ts": st["first_ts"] or "", "type": "session_meta",
            "schema_version": SCHEMA_VERSION, "thread_id": thread,
            "session_id": self.session_id_of(thread), "source": "startup", "cwd": st["cwd"] or "",
            "baseline": None, "permissions": perms, "model": st["model"],
            "client": {"name": "openclaw", "version": st["app_version"]},
            "title": self.redacted(self.title()),
            "data": {"agent": agent, "facts": facts,
                     "unknown": ["baseline", "head", "dirty", "identity", *unknown_permissions(perms)],
                     "lines": st["lines"], "skipped": dict(st["skipped"]),
                     "unrecognized": dict(st["unrecognized"]), "unmappable": dict(st["unmappable"])},
        }

    def summary_fields(self) -> dict[str, Any]:
        """Ids, cwd, model, title; no branch or HEAD (OpenClaw records no git state)."""
        thread = self.thread()
        st = self.state
        return {"thread_id": thread, "session_id": self.session_id_of(thread) if thread else None,
                "cwd": st["cwd"] or "", "branch": None, "head": None, "model": st["model"],
                "title": self.redacted(self.title()), "client_version": st["app_version"],
                "parent_thread_id": None}


def in_store(file: AgentFile) -> bool:
    """True for a window of the SQLite store (`<db>#<session_id>`), False for a JSONL file."""
    return "#" in file.path.name


def _agent_id(file: AgentFile) -> str | None:
    return agent_id_of(str(file.path))


def agent_id_of(path: str) -> str | None:
    """The agent id from a path: `agents/<agentId>/agent/<db>` or `agents/<agentId>/sessions/…`."""
    parts = Path(path).parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i - 1] == "agents" and parts[i + 1] in ("agent", "sessions"):
            return parts[i]
    return None


def session_id_of(path: str) -> str | None:
    """OpenClaw's session id from a window's path (`<db>#<id>`) or a transcript's (`<id>.jsonl`)."""
    name = Path(path).name
    if "#" in name:
        return split(path)[1] or None
    return name.removesuffix(".jsonl") if name.endswith(".jsonl") else None


def _lifecycle_notes(agent: dict[str, Any]) -> list[str]:
    """What OpenClaw's own lifecycle did to the session (facts, not drift)."""
    notes = []
    if agent["superseded_by"]:
        notes.append(f"OpenClaw has since moved {agent['session_key']} on to session "
                     f"{agent['superseded_by']} (a reset, /new or a rollover); resuming this id "
                     "continues the earlier transcript")
    if agent["resets"]:
        notes.append(f"the transcript was reset {len(agent['resets'])} time(s) inside this session "
                     f"(latest {agent['resets'][-1]}): the model sees only what came after")
    if agent["archived"]:
        notes.append("OpenClaw archived this session")
    return notes


def _superseded(window: dict[str, Any], session_id: object) -> str | None:
    current = window.get("current_session_id")
    return current if isinstance(current, str) and current and current != session_id else None


def _texts(content: object) -> str:
    if not isinstance(content, list):
        return ""
    return "\n".join(b["text"] for b in content
                     if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
