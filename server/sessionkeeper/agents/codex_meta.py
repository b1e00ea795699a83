"""The session_meta a Codex rollout stands for, and the small pure readings of Codex's items.

The meta describes the rollout as it now stands: its thread id, the latest cwd, the creation-time
`session_meta.git` (Codex never updates it), the latest permissions and model, the best title.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..events import SCHEMA_VERSION
from .translate import Record, Translator, text_of, token_count
from .vocab import as_text, redact_url, unknown_permissions

HARNESS_PREFIXES = ("<environment_context>", "<user_instructions>", "<INSTRUCTIONS>",
                    "# AGENTS.md instructions", "<user_shell_command>", "<turn_aborted>",
                    "<permissions instructions>", "<skill>", "<subagent_notification>")


def codex_meta(tr: Translator) -> Record | None:
    """session_meta of a rollout: ids, latest cwd, creation-time git, latest permissions and model."""
    st = tr.state
    if st["thread_id"] is None:
        return None
    git, base_cwd = st["git"], st["meta_cwd"] or st["cwd"]
    baseline = None
    unknown = ["dirty", "root_commits", "tool_profile"]
    if git is not None:
        remote = redact_url(git.get("repository_url"))
        baseline = {"repo_root": base_cwd, "worktree": base_cwd,
                    "identity": {"root_commits": [], "remote_url": remote} if remote else None,
                    "branch": git.get("branch"), "head": git.get("commit_hash")}
        if not git.get("commit_hash"):
            unknown.append("head")
            if not git.get("branch"):  # `git: {}`, as in a repository without commits
                unknown.append("branch")
    perms = st["permissions"] or {"tool_profile": "unknown"}
    unknown = [u for u in unknown if u != "tool_profile"] + unknown_permissions(st["permissions"])
    title = st["title"] or st["first_prompt"]
    return {
        "seq": 0, "ts": st["meta_ts"] or st["first_ts"] or "", "type": "session_meta",
        "schema_version": SCHEMA_VERSION, "thread_id": st["thread_id"],
        "session_id": tr.session_id_of(st["thread_id"]),
        "source": "startup", "cwd": st["cwd"] or "", "baseline": baseline,
        "permissions": dict(perms), "model": st["model"],
        "client": {"name": "codex", "version": st["client"]}, "title": tr.redacted(title),
        "data": {"agent": {"name": "codex", "path": str(tr.file.path),
                           "archived": tr.file.archived, "ids": dict(st["ids"]), **st["origin"],
                           "permissions_as_written": st["raw_permissions"],
                           "forked_from": ({"thread_id": st["forked_from"]} if st["forked_from"]
                                           else None)},
                 "facts": dict(st["facts"]), "unknown": unknown, "lines": st["lines"],
                 "skipped": dict(st["skipped"]), "unrecognized": dict(st["unrecognized"]),
                 "unmappable": dict(st["unmappable"])},
    }


def harness(p: dict[str, Any], text: str) -> bool:
    """True for a user-role message the harness wrote (environment, AGENTS.md, hook context)."""
    kinds = (p.get("internal_chat_message_metadata_passthrough") or {}).get("content_item_kinds")
    if isinstance(kinds, list) and kinds:
        return "user.text" not in kinds
    return text.lstrip().startswith(HARNESS_PREFIXES)


def sandbox_name(raw: object) -> str:
    """The sandbox policy's name (`sandbox_policy.type`, or older `mode`, or the value itself)."""
    if isinstance(raw, dict):
        return as_text(raw.get("type") or raw.get("mode") or raw)
    return as_text(raw)


def change_kind(change: object) -> tuple[str, str | None]:
    """("add" | "update" | "delete", moved-to path) of one patch_apply_end change (old and new shapes)."""
    if not isinstance(change, dict):
        return "update", None
    kind = change.get("type")
    if not isinstance(kind, str):
        kind = next((k for k in ("add", "delete", "update") if k in change), "update")
        inner = change.get(kind)
        move = inner.get("move_path") if isinstance(inner, dict) else None
    else:
        move = change.get("move_path")
    return kind, move if isinstance(move, str) and move else None


def failed(output: object) -> bool:
    """True when an apply_patch output says the patch was not applied."""
    first = text_of(output) if not isinstance(output, str) else output
    head = first.strip().splitlines()[0].lower() if first.strip() else ""
    return "error" in head or "fail" in head


def loads(raw: str) -> Any:
    """A JSON argument string parsed, or None when it is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def str_field(value: object) -> str | None:
    """A header field that must be a string: itself when a non-empty one, else None."""
    return value if isinstance(value, str) and value else None


def git_block(raw: object) -> dict[str, str] | None:
    """`session_meta.git` with only its string fields (a crafted value of another type is left out)."""
    if not isinstance(raw, dict):
        return None
    return {k: v for k in ("commit_hash", "branch", "repository_url") if (v := str_field(raw.get(k)))}


def as_int(value: object) -> int:
    """A token count: the int itself when a credible one (`token_count`), else 0."""
    return token_count(value)
