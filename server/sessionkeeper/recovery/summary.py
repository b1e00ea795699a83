"""Short summaries of threads: what a status bar, a listing and the index show."""

from __future__ import annotations

from typing import Any

import orjson


def status_summary(state: Any, meta: dict[str, Any]) -> dict[str, Any]:
    """Title, branch, todos done/total, tests passed/total, cost and model of a state."""
    todos = state["todos"].summary()
    tests = state["verifier"].summary().get("tests")
    baseline = state["worktree"].snapshot().get("baseline") or meta.get("baseline") or {}
    return {
        "title": meta.get("title"),
        "branch": baseline.get("branch"),
        "head": baseline.get("head"),
        "todos": {"done": todos["done"], "total": todos["total"]},
        "tests": {"passed": tests["passed"], "total": tests["total"]}
        if tests and tests.get("total") is not None else None,
        "cost_usd": state["cost"].totals()["usd"],
        "model": state["model"].summary().get("effective"),
    }


def _progress(summary: dict[str, Any], key: str, fields: tuple[str, str]) -> Any:
    value = summary.get(key)
    if not isinstance(value, dict) or value.get(fields[1]) is None:
        return None
    return {fields[0]: value.get(fields[0], 0), fields[1]: value[fields[1]]}


def thread_summary(row: dict[str, Any], *, live: dict[str, Any] | None = None,
                   state: str | None = None) -> dict[str, Any]:
    """A ThreadSummary (PROTOCOL.md) from an index row, or from the live session's summary."""
    summary = live or row.get("summary") or {}
    forked = row.get("forked_from")
    return {
        "thread_id": row["thread_id"],
        "title": summary.get("title") or row.get("title"),
        "cwd": row.get("cwd"),
        "branch": summary.get("branch") or row.get("branch"),
        "created_at": row.get("created_at"),
        "last_activity": row.get("last_activity"),
        "archived": bool(row.get("archived")),
        "session_count": row.get("session_count") or 0,
        "event_count": row.get("event_count") or 0,
        "damaged": bool(row.get("damaged")),
        "forked_from": orjson.loads(forked) if isinstance(forked, str) else forked,
        "todos": _progress(summary, "todos", ("done", "total")),
        "tests": _progress(summary, "tests", ("passed", "total")),
        "cost_usd": summary.get("cost_usd"),
        "state": state,
    }


def estimate_state(row: dict[str, Any], current: Any) -> str:
    """What a resume would likely say, from the index alone: repository, branch and HEAD.

    Cheap (no rollout read, no file hashing), so a listing can show it; the real check runs
    on resume and may still find changed files.
    """
    if row.get("damaged"):
        return "blocked"
    repo = row.get("repo_key")
    roots = (current.identity.root_commits if current is not None and current.identity else [])
    if repo and repo not in roots:
        return "blocked"
    summary = row.get("summary") or {}
    branch = summary.get("branch") or row.get("branch")
    head = summary.get("head")
    if current is not None and (branch != current.branch or (head and head != current.head)):
        return "drift"
    return "ok"
