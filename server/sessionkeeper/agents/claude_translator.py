"""Claude Code transcript lines → our records: the translator a Claude Code file is read with.

Imported by `ClaudeAgent.translator` when a file is parsed (a listing that only stats files never
loads it). Only the live branch (`live.py`) is folded; cost is counted from every branch. The
field-by-field mapping is in MAPPING.md beside this file.
"""

from __future__ import annotations

from typing import Any

from .base import AgentFile, canonical_uuid
from .claude_files import (
    best_title,
    checked_out,
    claude_meta,
    legacy_todos,
    recent_commits,
    subagent_meta,
)
from .claude_tools import ClaudeTools
from .live import CONVERSATION, Chain
from .translate import MAX_TOKENS, MESSAGE_CAP, Record, capped, one_line, text_of, token_count
from .vocab import permissions, set_fact

_SKIPPED = frozenset({
    "queue-operation", "api-request", "api-request-blob", "api-request-shape", "tools-used",
    "last-prompt", "mode", "atis-latch", "file-history-snapshot", "progress", "agent-name",
    "pr-link", "worktree-state", "frame-link", "continued-in", "relocated", "started", "result"})
_SYNTHETIC = "<synthetic>"
_TOKEN_BITS = MAX_TOKENS.bit_length()


class ClaudeTranslator(ClaudeTools):
    """Claude Code transcript lines → our records (live branch only; cost from every branch)."""

    agent = "claude"

    def __init__(self, file: AgentFile, state: dict[str, Any] | None = None) -> None:
        super().__init__(file, state)
        self.chain = Chain(self.state["chain"], incremental=state is not None)

    def initial_state(self) -> dict[str, Any]:
        """The base state plus the session's place, settings, open calls and the chain's leaf."""
        state = super().initial_state()
        stem = self.file.path.name.removesuffix(".zst").removesuffix(".jsonl")
        own = canonical_uuid(self.file.parent) if self.file.kind == "subagent" else canonical_uuid(stem)
        state.update(thread_id=own, other_sessions={}, cwd=None, branch=None, version=None,
                     entrypoint=None, model=None, mode=None, place=None, titles={},
                     first_prompt=None, calls={}, edits={}, tasks={}, task_calls={},
                     todo_digest=None, seen=[], cost_state={}, compact_through=None,
                     legacy_todo=None, subagent=None, facts={}, chain={"leaf": None, "tips": []},
                     place_ts=None, model_ts=None, cost_ts=None, sandboxed=None, commits=None)
        return state

    def feed(self, number: int, line: dict[str, Any]) -> None:
        """Fold one transcript line (the hot path: most lines take the first branch of each test)."""
        st = self.state
        kind = line.get("type")
        ts = line.get("timestamp")
        if ts.__class__ is str and ts:
            if st["first_ts"] is None:
                st["first_ts"] = ts
            st["last_ts"] = ts
        else:
            ts = st["last_ts"]
        sid = line.get("sessionId")
        if sid is not None and sid != st["thread_id"]:
            self._session_id(sid)
        conversation = kind in CONVERSATION
        if conversation and line.get("isSidechain") is True and self.file.kind == "session":
            self.skip("sidechain")  # an old-style sub-agent line inside the parent's transcript
            return
        tag = self.chain.add(line, conversation)
        if self.chain.restart:
            self.restart = True
            return
        if conversation:  # where it ran (the common line changes nothing: compare, move on)
            cwd, branch = line.get("cwd"), line.get("gitBranch")
            if cwd is not None or branch is not None:
                st["place_ts"] = ts  # the age of the cwd / branch facts
            if cwd != st["cwd"] or branch != st["branch"]:
                self._moved(cwd, branch, ts, tag)
            version, mode = line.get("version"), line.get("permissionMode")
            if version != st["version"] and version is not None:
                self._settings(line, ts, tag)
            elif mode != st["mode"] and mode is not None:
                self._mode(mode, ts, tag)
        if kind == "user":
            self._user(line, ts, tag)
        elif kind == "assistant":
            self._assistant(line, ts, tag)
        elif kind == "system":
            self._system(line, ts)
        elif kind == "attachment":
            attachment = line.get("attachment") or {}
            if attachment.get("type") == "session_context" and st.get("commits") is None:
                self._git_status(attachment, line.get("cwd"))
            self.skip(f"attachment:{attachment.get('type')}")
        elif kind in ("custom-title", "ai-title", "summary"):
            self._title(str(kind), line, ts)
        elif kind == "permission-mode":
            self._mode(line.get("permissionMode"), ts, None)
        elif kind == "cost-state":
            self._cost_state(line, ts)
        elif kind in _SKIPPED:
            self.skip(kind)
        else:
            self.unknown(kind if isinstance(kind, str) else "(no type)")

    # -- identity and place --------------------------------------------------------------------
    def _session_id(self, raw: object) -> None:
        sid = canonical_uuid(raw)
        st = self.state
        if sid is None:
            return
        if st["thread_id"] is None:
            st["thread_id"] = sid
        elif sid != st["thread_id"]:
            st["other_sessions"][sid] = st["other_sessions"].get(sid, 0) + 1

    def _settings(self, line: dict[str, Any], ts: str | None, tag: str | None) -> None:
        """A line with another CLI version (a resume by a newer CLI): version, entrypoint, mode."""
        st = self.state
        for key, field in (("version", "version"), ("entrypoint", "entrypoint")):
            if isinstance(line.get(field), str):
                st[key] = line[field]
        if line.get("permissionMode") is not None:
            self._mode(line["permissionMode"], ts, tag)

    def _moved(self, cwd: object, branch: object, ts: str | None, tag: str | None) -> None:
        st = self.state
        cwd = cwd if isinstance(cwd, str) and cwd else st["cwd"]
        branch = branch if isinstance(branch, str) and branch else st["branch"]
        if cwd and [cwd, branch] != st["place"]:
            st.update(cwd=cwd, branch=branch, place=[cwd, branch])
            if branch:
                self.emit("baseline", ts, {"repo_root": cwd, "worktree": cwd, "identity": None,
                                           "branch": checked_out(branch), "head": None,
                                           "data": {"unknown": ["head", "dirty", "identity"]}}, tag=tag)

    def _git_status(self, attachment: dict[str, Any], cwd: object) -> None:
        """The commits Claude Code listed at the session's start (its gitStatus context): what a
        baseline without a SHA is identified by (`recovery.identity`)."""
        context = attachment.get("context")
        commits = recent_commits(context.get("gitStatus") if isinstance(context, dict) else None)
        where = cwd if isinstance(cwd, str) and cwd else self.state["cwd"]
        if commits and where:
            self.state["commits"] = {"cwd": where, "commits": commits}

    def _mode(self, mode: object, ts: str | None, tag: str | None) -> None:
        if not isinstance(mode, str) or mode == self.state["mode"]:
            return
        self.state["mode"] = mode
        set_fact(self.state, "permissions", "claude permissionMode (+ toolUseResult.sandboxed)", ts)
        self.emit("permissions", ts, self.permissions(), tag=tag)

    def permissions(self) -> dict[str, Any]:
        """Permission mode as approval; a tool result's `sandboxed` flag as the sandbox (else unknown)."""
        sandboxed = self.state["sandboxed"]
        sandbox = None if sandboxed is None else "workspace-write" if sandboxed else "danger-full-access"
        return permissions(self.state["mode"], sandbox)

    def _title(self, kind: str, line: dict[str, Any], ts: str | None) -> None:
        key = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}[kind]
        text = line.get(key)
        self.skip(kind)
        if isinstance(text, str) and text.strip():
            self.state["titles"][kind] = one_line(text)
            if kind != "summary":
                set_fact(self.state, "title", f"claude {kind}", ts)
                self.emit("title", ts, {"title": self.state["titles"][kind]})

    # -- conversation ----------------------------------------------------------------------
    def _user(self, line: dict[str, Any], ts: str | None, tag: str | None) -> None:
        message = line.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if line.get("isCompactSummary") is True:
            self._compacted(line, text_of(content), ts, tag)
            return
        if content.__class__ is list:
            texts = []
            for block in content:
                if block.__class__ is dict:
                    kind = block.get("type")
                    if kind == "tool_result":
                        self._result(block, line, ts, tag)
                    elif kind == "text" and isinstance(block.get("text"), str):
                        texts.append(block["text"])
            text = "\n".join(texts)
        else:
            text = content if isinstance(content, str) else ""
        if not text or text.isspace() or line.get("isMeta") is True:
            return
        if self.state["first_prompt"] is None and not text.lstrip().startswith("<"):
            self.state["first_prompt"] = one_line(text)
        self.emit("message", ts, {"role": "user", "text": text if len(text) <= MESSAGE_CAP else capped(text),
                                  "message_id": tag}, tag=tag)

    def _assistant(self, line: dict[str, Any], ts: str | None, tag: str | None) -> None:
        message = line.get("message")
        if message.__class__ is not dict:
            self.skip("assistant:no message")
            return
        model = message.get("model")
        if model != self.state["model"] and isinstance(model, str) and model and model != _SYNTHETIC:
            self.state["model"] = model
            self.emit("model", ts, {"name": model, "overrides": {}}, tag=tag)
        if model != _SYNTHETIC:
            self.state["model_ts"] = ts
            usage = message.get("usage")
            if usage.__class__ is dict:
                self._usage(line, message, usage, ts, tag)
        content = message.get("content")
        if content.__class__ is not list:
            text = content if isinstance(content, str) else ""
        elif len(content) == 1:  # Claude Code writes one content block per line
            block = content[0]
            kind = block.get("type") if block.__class__ is dict else None
            if kind == "tool_use":
                self._call(block, ts, tag)
            text = block.get("text", "") if kind == "text" else ""
        else:
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    self._call(block, ts, tag)
            text = text_of(content)
        if text.__class__ is str and text and not text.isspace():
            self.emit("message", ts, {"role": "assistant",
                                      "text": text if len(text) <= MESSAGE_CAP else capped(text),
                                      "message_id": tag}, tag=tag)

    def _usage(self, line: dict[str, Any], message: dict[str, Any], usage: dict[str, Any],
               ts: str | None, tag: str | None) -> None:
        st = self.state
        mid = message.get("id")
        if mid is not None:
            seen = st["seen"]
            if mid in seen:
                return  # one API message is written as one line per content block, adjacent
            seen.append(mid)
            if len(seen) > 4:
                del seen[0]
        created = usage.get("cache_creation_input_tokens", 0)
        read = usage.get("cache_read_input_tokens", 0)
        tokens_in, tokens_out = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
        if not (created.__class__ is read.__class__ is tokens_in.__class__ is tokens_out.__class__ is int) \
                or (created | read | tokens_in | tokens_out) >> _TOKEN_BITS:  # too big, or < 0
            created, read, tokens_in, tokens_out = (token_count(created), token_count(read),
                                                    token_count(tokens_in), token_count(tokens_out))
        usd = line.get("costUSD")  # only in old transcripts
        model = message.get("model")
        self.emit("cost", ts, {
            "model": model if model.__class__ is str and model else "unknown",
            "input_tokens": tokens_in + created + read, "output_tokens": tokens_out,
            "usd": 0.0 if usd is None else float(usd) if isinstance(usd, (int, float)) else 0.0},
            tag=tag)
        st["cost_ts"] = ts

    def _cost_state(self, line: dict[str, Any], ts: str | None) -> None:
        usage = line.get("modelUsage")
        self.skip("cost-state")
        for model, row in (usage.items() if isinstance(usage, dict) else ()):
            usd = row.get("costUSD") if isinstance(row, dict) else None
            if not isinstance(usd, (int, float)):
                continue
            before = self.state["cost_state"].get(model, 0.0)
            delta = usd - before if usd >= before else usd  # lower: a new process counting from 0
            self.state["cost_state"][model] = usd
            if delta > 1e-12:
                self.emit("cost", ts, {"model": model, "input_tokens": 0, "output_tokens": 0,
                                       "usd": round(delta, 9),
                                       "data": {"source": "claude cost-state", "adjustment": True}})

    def _system(self, line: dict[str, Any], ts: str | None) -> None:
        subtype = line.get("subtype")
        if subtype == "compact_boundary":
            self.state["compact_through"] = self.state["seq"]
        self.skip(f"system:{subtype}")

    def _compacted(self, line: dict[str, Any], text: str, ts: str | None, tag: str | None) -> None:
        st = self.state
        through = st["compact_through"] if st["compact_through"] is not None else st["seq"]
        st["compact_through"] = None
        summary = capped(text) if text.strip() else "[compacted by Claude Code]"
        self.emit("compacted", ts, {"summary": summary, "through_seq": through,
                                    "data": {"source": "claude compact_boundary + isCompactSummary"}},
                  tag=tag)

    # -- end of a read -----------------------------------------------------------------------
    def finish(self) -> None:
        """Keep the live branch, add the legacy todos when the transcript had none, then count."""
        live = self.chain.live()
        if live is not None:
            renumbered = self.keep_only(live)
            through = self.state["compact_through"]
            if through is not None:
                self.state["compact_through"] = renumbered.get(through, through)
            self.state["rewound_lines"] = self.chain.dead
        if self.file.kind == "session":
            items, source = legacy_todos(self.file, self.state)
            if items is not None:
                self.emit("todo", self.state["last_ts"], {"items": items, "data": {"source": source}})
        elif self.state["subagent"] is None:
            self.state["subagent"] = subagent_meta(self.file)
        super().finish()

    def meta(self) -> Record | None:
        """session_meta: the session id, latest cwd / gitBranch, permission mode, model, version."""
        return claude_meta(self)

    def summary_fields(self) -> dict[str, Any]:
        """Ids, cwd, branch (no HEAD: Claude Code records no commit), model, title, version, parent."""
        st = self.state
        thread = st["thread_id"]
        return {"thread_id": thread, "session_id": self.session_id_of(thread) if thread else None,
                "cwd": st["cwd"] or "", "branch": st["branch"], "head": None, "model": st["model"],
                "title": self.redacted(best_title(st)), "client_version": st["version"],
                "parent_thread_id": thread if self.file.kind == "subagent" else None}
