"""The session_meta a Hermes session stands for, and the source context it keeps apart.

The meta describes the session as it now stands: our thread id (derived from Hermes's id, or its
compression chain's root), the latest cwd / branch / repository root of the `sessions` row, the
model, the best title, and — in `data.agent.source_context` — where its messages came from
(platform, chat type, chat id, thread, routing key; the user only as Hermes's hash). That context
is for routing and checks; it is never part of a message record (the model never saw it there).
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from ..events import SCHEMA_VERSION
from .translate import Record, Translator


def iso(epoch: object) -> str | None:
    """An epoch-seconds float as our ISO-8601 UTC text with milliseconds, or None."""
    if not isinstance(epoch, (int, float)) or isinstance(epoch, bool) or not 0 < epoch < 1e11:
        return None
    ms = int(epoch * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def hashed_user(user_id: object) -> str | None:
    """A chat user's id as Hermes redacts it for a model (`user_<12 hex>`): never the raw id."""
    if not isinstance(user_id, str) or not user_id:
        return None
    return "user_" + hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]


CLI_SOURCES = frozenset({"cli", "tui", "desktop", "acp", "local"})
"""`sessions.source` values of a terminal/editor session (no chat behind it)."""


def agent_chat(row: dict[str, Any]) -> bool:
    """True for a session of a messaging platform (a chat), not of a terminal or editor."""
    return (row.get("source") or "unknown") not in CLI_SOURCES


def source_context(row: dict[str, Any]) -> dict[str, Any]:
    """Where a session's messages came from: platform, chat type and id, thread, the gateway's
    routing key (`route`: Hermes's `session_key`, e.g. agent:main:telegram:dm:4242)."""
    platform = row.get("source") or "unknown"
    out: dict[str, Any] = {"platform": platform, "chat": agent_chat(row)}
    for ours, theirs in (("chat_type", "chat_type"), ("chat_id", "chat_id"),
                         ("chat_name", "display_name"), ("thread_id", "thread_id"),
                         ("route", "route"), ("profile", "profile_name")):
        if row.get(theirs):
            out[ours] = row[theirs]
    user = row.get("user_id")  # already hashed by the translator (`hashed_user`)
    if isinstance(user, str) and user:
        out["user"] = user if user.startswith("user_") else hashed_user(user)
    return out


def hermes_meta(tr: Translator) -> Record | None:
    """session_meta of one Hermes session, or None when it has no id."""
    st = tr.state
    thread, row = st["thread_id"], st["row"]
    if thread is None:
        return None
    cwd = row.get("cwd") or ""
    branch = row.get("git_branch")
    # the classic CLI records only the cwd: the repository there is the index's (identity found at
    # import), the branch unrecorded (never compared); the TUI and desktop record the branch too
    baseline = ({"repo_root": row.get("git_repo_root") or cwd, "worktree": cwd, "identity": None,
                 "branch": branch, "head": None} if cwd else None)
    unknown = ["head", "dirty", "identity", "tool_profile"]
    if baseline is None:
        unknown.append("baseline")
        if not cwd and agent_chat(row):
            unknown.append("workspace")  # a chat runs in no workspace: none is checked
    elif not branch:
        unknown.append("branch")
    title = st.get("title") or st["first_prompt"]
    agent = {"name": "hermes", "path": str(tr.file.path), "kind": tr.file.kind,
             "ids": {"session_id": st["native_id"], "parent_session_id": row.get("parent_session_id"),
                     "successor": row.get("successor")},
             "source_context": source_context(row),
             "ended": ({"reason": row.get("end_reason"), "at": iso(row.get("ended_at"))}
                       if row.get("end_reason") else None),
             "last_message_at": st["last_ts"], "archived": bool(row.get("archived")),
             "counts": {"messages": row.get("message_count"), "tool_calls": row.get("tool_call_count"),
                        "rewinds": row.get("rewind_count")}}
    return {
        "seq": 0, "ts": st["first_ts"] or iso(row.get("started_at")) or "", "type": "session_meta",
        "schema_version": SCHEMA_VERSION, "thread_id": thread, "session_id": tr.session_id_of(thread),
        "source": "startup", "cwd": cwd, "baseline": baseline,
        "permissions": {"tool_profile": "unknown"}, "model": row.get("model"),
        "client": {"name": "hermes", "version": None}, "title": tr.redacted(title),
        "data": {"agent": agent, "facts": dict(st["facts"]), "unknown": unknown,
                 "lines": st["lines"], "rewound_lines": st["rewound_lines"],
                 "skipped": dict(st["skipped"]), "unrecognized": dict(st["unrecognized"]),
                 "unmappable": dict(st["unmappable"])},
    }
