"""The files of Claude Code around a transcript: the companions and the synthesized meta.

(The listing of `projects/<project>/<session>.jsonl` and `<session>/subagents/agent-*.jsonl` is
discovery: `claude.py`.) Claude Code writes no header line: the meta is synthesized from the
translator's state as the file now stands (latest cwd and gitBranch, permission mode, model, CLI
version, best title). Companions are small JSON files read whole with a size cap: the legacy
`todos/<session>-agent-<session>.json` (used only when the transcript holds no todo list) and a
sub-agent's `.meta.json`.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from typing import TYPE_CHECKING, Any

import orjson

from ..events import SCHEMA_VERSION
from .base import AgentFile
from .lines import open_ro
from .translate import Record, digest
from .vocab import todo_items, unknown_permissions

if TYPE_CHECKING:
    from .claude_tools import ClaudeTools

COMPANION_CAP = 1 << 20
_TITLE_ORDER = ("custom-title", "ai-title", "summary")
_RECENT = "\nRecent commits:\n"
_COMMIT_LINE = re.compile(r"([0-9a-f]{7,40}) (.*)")
_MAX_COMMITS = 10


def claude_meta(tr: ClaudeTools) -> Record | None:
    """session_meta of a transcript, or None when no session id was found."""
    st = tr.state
    thread = st["thread_id"]
    if thread is None:
        return None
    cwd, branch = st["cwd"] or "", st["branch"]
    baseline = ({"repo_root": cwd, "worktree": cwd, "identity": None, "branch": checked_out(branch),
                 "head": None} if branch else None)
    perms = tr.permissions()
    unknown = ["head", "dirty", "identity", *unknown_permissions(perms)]
    if baseline is None:
        unknown.append("baseline")
    title = best_title(st)
    others = dict(st["other_sessions"])
    agent: dict[str, Any] = {"name": "claude", "path": str(tr.file.path), "kind": tr.file.kind,
                             "entrypoint": st["entrypoint"], "other_session_ids": others}
    if tr.file.kind == "subagent":
        agent["subagent"] = {"parent_thread_id": thread, "file": tr.file.path.name,
                             "meta": st["subagent"]}
    return {
        "seq": 0, "ts": st["first_ts"] or "", "type": "session_meta",
        "schema_version": SCHEMA_VERSION, "thread_id": thread,
        "session_id": tr.session_id_of(thread),
        "source": "startup", "cwd": cwd, "baseline": baseline,
        "permissions": perms,
        "model": st["model"], "client": {"name": "claude", "version": st["version"]},
        "title": tr.redacted(title),
        "data": {"agent": agent, "facts": _facts(st), "unknown": unknown,
                 "lines": st["lines"], "rewound_lines": st["rewound_lines"],
                 "skipped": dict(st["skipped"]), "unrecognized": dict(st["unrecognized"]),
                 "unmappable": dict(st["unmappable"]),
                 **({"commits": st["commits"]} if st.get("commits") else {})},
    }


def recent_commits(git_status: object) -> list[dict[str, str]]:
    """The commits under "Recent commits:" in Claude Code's gitStatus context (`git log
    --oneline` at the session's start, newest first: HEAD first), as {commit, subject}."""
    if not isinstance(git_status, str) or _RECENT not in git_status:
        return []
    out = []
    for line in git_status.split(_RECENT, 1)[1].split("\n")[:_MAX_COMMITS]:
        found = _COMMIT_LINE.fullmatch(line.rstrip("\r"))
        if found is None:
            break
        out.append({"commit": found[1], "subject": found[2]})
    return out


def checked_out(branch: str) -> str | None:
    """The branch of a baseline from a line's gitBranch: None for "HEAD" (a detached HEAD, as
    Claude Code writes it; git names no branch so)."""
    return None if branch == "HEAD" else branch


def best_title(st: dict[str, Any]) -> str | None:
    """custom-title, else ai-title, else summary, else the first prompt."""
    return next((st["titles"][k] for k in _TITLE_ORDER if k in st["titles"]), st["first_prompt"])


def _facts(st: dict[str, Any]) -> dict[str, Any]:
    """Where each fact came from in the transcript and how old it is (the ts of its latest line)."""
    facts = dict(st["facts"])  # permissions and title: set when they change
    if st["cwd"]:
        facts["cwd"] = {"source": "claude cwd of the latest line", "as_of": st["place_ts"]}
    if st["branch"]:
        facts["git"] = {"source": "claude gitBranch of the latest line (no commit SHA)",
                        "as_of": st["place_ts"]}
    if st["model_ts"]:
        facts["model"] = {"source": "claude assistant message.model", "as_of": st["model_ts"]}
    if st["cost_ts"]:
        facts["cost"] = {"source": "claude message.usage and cost-state", "as_of": st["cost_ts"]}
    return facts


def _read_json(path: os.PathLike[str] | str) -> tuple[Any, int | None]:
    """(parsed JSON or None, mtime_ns) of a small companion file; None when too big or unreadable."""
    try:
        fd = open_ro(path)
    except OSError:
        return None, None
    try:
        st = os.fstat(fd)
        if st.st_size > COMPANION_CAP:
            return None, st.st_mtime_ns
        data = os.read(fd, COMPANION_CAP + 1)
    finally:
        os.close(fd)
    try:
        return orjson.loads(data), st.st_mtime_ns
    except orjson.JSONDecodeError:
        return None, st.st_mtime_ns


def legacy_todos(file: AgentFile, state: dict[str, Any]) -> tuple[list[dict[str, str]] | None, str]:
    """The legacy todos/ list to emit once, when the transcript stated none; (None, "") otherwise."""
    if state["todo_digest"] is not None or not file.companions:
        return None, ""
    raw, _ = _read_json(file.companions[0])
    if not isinstance(raw, list):
        return None, ""
    items = todo_items(raw, text_keys=("content", "text"))
    key = digest(items)
    if key == state["legacy_todo"]:
        return None, ""
    state["legacy_todo"] = key
    return items, f"claude legacy todos/{file.companions[0].name}"


def subagent_meta(file: AgentFile) -> dict[str, Any] | None:
    """The scalar fields of a sub-agent's `.meta.json` (e.g. the parent's tool_use id)."""
    if not file.companions:
        return None
    raw, mtime = _read_json(file.companions[0])
    if not isinstance(raw, dict):
        return None
    out = {k: v for k, v in raw.items() if isinstance(v, (str, int, float, bool)) and k}
    if mtime is not None:
        out["read_at"] = dt.datetime.fromtimestamp(mtime / 1e9, dt.timezone.utc).isoformat()
    return out
