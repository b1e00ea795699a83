"""What the model and the user are told about a resume: the report in a few plain sentences.

The model's context says what was verified (ok), or exactly what differs since the session last
ran — branch, HEAD with the new commits' subjects, files changed outside the session, tool calls
in doubt — and that the conversation's earlier git status and file contents are stale (drift);
a stop says why and what to do instead (blocked). The user's line is one sentence. Only the
report's own facts are used; text from logs is flattened to single lines.
"""

from __future__ import annotations

TYPE_CHECKING = False  # standard library only: a resume its digest proves ok runs in a thin process
if TYPE_CHECKING:
    from typing import Any

    from ..recovery.findings import Difference
    from ..recovery.report import Report
    from .digest import Digest

ACK_PROMPT = "sessionkeeper: continue"
"""The prompt that acknowledges a gated (Claude) resume from inside the session."""
HOOK_SOURCE = "recorded by Session Keeper's hook (exact)"
_RESUME = {"codex": "codex resume", "claude": "claude --resume"}
_SHOWN = 12


def _flat(value: object, limit: int = 200) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _sha(value: object) -> str:
    return str(value)[:10] if isinstance(value, str) else "none"


def _where(value: Any) -> str:
    if isinstance(value, dict):
        root = value.get("repo_root") or "?"
        ident = value.get("identity") or {}
        roots = ident.get("root_commits") if isinstance(ident, dict) else None
        return f"{root}" + (f" (root commit {str(roots[0])[:10]})" if roots else "")
    return "no git repository" if value is None else _flat(value)


def difference_line(d: Difference) -> str:
    """One difference as a sentence fragment."""
    if d.kind == "branch":
        return f"branch: {d.recorded or 'detached HEAD'} → {d.current or 'detached HEAD'}"
    if d.kind == "head":
        moved = f" ({_flat(d.detail, 400)})" if d.detail else ""
        return f"HEAD: {_sha(d.recorded)} → {_sha(d.current)}{moved}"
    if d.kind in ("file_changed", "file_missing"):
        path = d.recorded.get("path") if isinstance(d.recorded, dict) else d.recorded
        what = "changed outside the session" if d.kind == "file_changed" else "missing now"
        return f"file {what}: {_flat(path)}"
    if d.kind == "other_repository":
        return f"another repository: the session ran in {_where(d.recorded)}; this is {_where(d.current)}"
    if d.kind == "cwd_missing":
        return f"the session's working directory {_flat(d.recorded)} no longer exists"
    if d.kind == "relocated":
        return f"moved: the session ran in {_flat(d.recorded)}; this is {_flat(d.current)}"
    detail = f" ({_flat(d.detail)})" if d.detail else ""
    return f"{d.kind}: {_flat(d.recorded)} → {_flat(d.current)}{detail}"


def _doubt_lines(in_doubt: list[dict[str, Any]]) -> list[str]:
    return [f"tool call {_flat(o.get('operation_id'))} ({_flat(o.get('tool'))}) started but never "
            "finished: check what it did before running it again" for o in in_doubt[:_SHOWN]]


def _todos(summary: dict[str, Any] | None) -> str | None:
    if not summary or not summary.get("total"):
        return None
    open_items = [i for i in summary.get("items", []) if i.get("status") != "done"][:5]
    rest = "; open: " + "; ".join(_flat(i.get("text"), 80) for i in open_items) if open_items else ""
    return f"todos: {summary['done']}/{summary['total']} done{rest}"


def _todos_of(report: Report) -> dict[str, Any] | None:
    todos = report.subsystems.get("todos")
    return todos.summary if todos is not None else None


def _source(report: Report) -> str:
    git = report.facts.get("git") if isinstance(report.facts.get("git"), dict) else None
    if git and git.get("exact") is False:
        return f"reconstructed from the agent's log ({_flat(git.get('source'))}, as of {git.get('as_of')})"
    return HOOK_SOURCE


def _baseline(report: Report) -> str:
    worktree = report.subsystems.get("worktree")
    return _flat(worktree.headline) if worktree is not None and worktree.headline else report.workspace


def _verified(workspace: str, baseline: str, source: str, todos: dict[str, Any] | None,
              in_doubt: list[dict[str, Any]]) -> str:
    lines = [f"Session Keeper verified this resumed session against {workspace}: nothing changed "
             f"since it last ran. Baseline: {baseline}, {source}."]
    if (text := _todos(todos)) is not None:
        lines.append(f"- {text}")
    lines += [f"- {line}" for line in _doubt_lines(in_doubt)]
    return "\n".join(lines)


def verified(report: Report) -> str:
    """The model's context after an ok resume: the verified state in a few lines."""
    return _verified(report.workspace, _baseline(report), _source(report), _todos_of(report),
                     report.in_doubt_operations)


def verified_digest(known: Digest) -> str:
    """The same, from the digest the fast check proved ok."""
    return _verified(known.cwd, _flat(known.headline), HOOK_SOURCE, known.todos, known.in_doubt)


def changed(report: Report) -> tuple[str, str]:
    """(the model's context, the user's line) after a resume with drift that goes on."""
    shown = report.differences[:_SHOWN]
    more = len(report.differences) - len(shown)
    lines = [f"Session Keeper checked this resumed session against {report.workspace}: the "
             f"workspace CHANGED since the session last ran (baseline {_source(report)}):"]
    lines += [f"- {difference_line(d)}" for d in shown]
    if more > 0:
        lines.append(f"- … and {more} more difference(s)")
    lines += [f"- {line}" for line in _doubt_lines(report.in_doubt_operations)]
    lines += [f"- stale: {_flat(i.reason)}" for i in report.invalidated[:_SHOWN]]
    if (todos := _todos(_todos_of(report))) is not None:
        lines.append(f"- {todos}")
    lines.append("The git status, branch, commits and file contents shown earlier in this "
                 "conversation are stale: do not act on them. Re-read files before editing them, "
                 "and check with the user before continuing work meant for the earlier state.")
    user = ("Session Keeper: this session resumed in a changed workspace — "
            + "; ".join(difference_line(d) for d in shown[:3])
            + (f"; +{len(report.differences) - 3} more" if len(report.differences) > 3 else "")
            + ". The model was told.")
    return "\n".join(lines), _flat(user, 600)


def refused(report: Report, *, agent: str, session_id: str, why: str) -> tuple[str, str]:
    """(the stop reason, the model's context) for a resume that must not go on here."""
    shown = report.differences[:4]
    what = "; ".join(difference_line(d) for d in shown) or "; ".join(
        _flat(d.get("reason")) for d in report.damaged[:2]) or report.verdict
    places = [p for p in (report.relocate_to, _recorded_root(report)) if p]
    import shlex  # only to say where a refused resume should go

    go = (f"Resume it where it ran: cd {shlex.quote(places[0])} && {_RESUME[agent]} {session_id}. "
          if places else "")
    ack = (f"To continue here anyway, send the prompt `{ACK_PROMPT}` or run "
           if agent == "claude" else "To continue here anyway, run ")
    reason = (f"Session Keeper stopped this resume ({why}): {what}. {go}{ack}"
              f"`sessionkeeper hooks ack {agent} {session_id}`"
              + (" and resume again." if agent == "codex" else "."))
    context = ("Session Keeper: this resumed session must not continue here — " + what
               + ". Every prompt is blocked until the user acknowledges it; do not act on this "
                 "conversation's earlier state.")
    return _flat(reason, 1500), context


def _recorded_root(report: Report) -> str | None:
    for d in report.differences:
        if d.kind == "other_repository" and isinstance(d.recorded, dict):
            return d.recorded.get("repo_root")
        if d.kind == "cwd_missing" and isinstance(d.recorded, str):
            return None
    return None


def first_record(source: str) -> str:
    """The context of a resume whose session Session Keeper had no journal of (hooks came later)."""
    return (f"Session Keeper recorded this session's baseline now ({source}); it had no earlier "
            "record of it, so what changed before now could not be checked.")
