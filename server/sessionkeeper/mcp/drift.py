"""drift_since: what changed in the session's workspace since a seq — branch, HEAD, files — and who.

The comparison is the recovery contract's: the session's state at the seq (`Reader.state_at`) and
its state now are each validated by their subsystems (`SessionState.validate`, what a resume
check's assessment runs) against one capture of the workspace; a blocking difference (another
repository, a missing cwd) ends the comparison there, as it ends a resume check. What
differs from the state at the seq changed since then; what also differs from the state now was
never recorded by the session (someone else changed it, outside the session, or a tool call
still running); the rest the session recorded after the seq, and its records say who:
- a `baseline` record right after a tool call: that call moved HEAD or the branch (the agent);
  a newer session's baseline or one at a start/clear/compact: it moved between runs (external);
- a file version's author (agent, user, external, rewind), with the tool call it followed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .shape import capped, flat, sha
from .since import Since

if TYPE_CHECKING:
    from ..events import Record
    from ..recovery.findings import Difference, Workspace
    from ..recovery.replay import Replayed
    from .reading import Reader
    from .target import Target

GIT_KINDS = ("branch", "head")
BLOCKING = ("cwd_missing", "other_repository", "relocated", "baseline_unreadable", "git_refused")
FILE_KINDS = ("file_changed", "file_missing")


@dataclass(frozen=True)
class Move:
    """A recorded change of the baseline after the seq: where, and who made it."""

    seq: int
    branch: str | None
    head: str | None
    by: str


def drift(reader: Reader, target: Target, now: Replayed, since: Since) -> dict[str, Any]:
    """The drift_since result (before shaping): summary lines, git, files."""
    workspace = reader.workspace(now)
    from_now, _ = now.state.validate(workspace)
    summary: list[str] = []
    out: dict[str, Any] = {"since": {"seq": since.seq, "what": since.what, "at": since.at},
                           "last_seq": now.restored_to_seq}
    blocking = [d for d in from_now if d.kind in BLOCKING]
    if blocking:  # another repository, a missing cwd: nothing else compares (as on a resume)
        from ..hooks.telling import difference_line

        out.update(workspace=[difference_line(d) for d in blocking], changed=True, files=[],
                   summary=[f"{difference_line(d)} (the session cannot continue here)"
                            for d in blocking])
        return out
    from_then, _ = reader.state_at(target, now, since.seq).state.validate(workspace)
    records = reader.records_after(target, now, since.seq)
    calls = _calls_before(records)
    moves = _moves(reader, target, now, since.seq, records, calls)
    git = {d.kind: d for d in from_then if d.kind in GIT_KINDS}
    unrecorded = {d.kind: d for d in from_now if d.kind in GIT_KINDS}
    for kind in GIT_KINDS:
        if kind in git:
            entry = _git_change(kind, git[kind], moves, unrecorded.get(kind), workspace)
            out[kind] = entry
            summary.append(entry.pop("line"))
    files = _files(now, from_then, from_now, since.seq, calls)
    shown, more = capped(files)
    out["files"] = shown
    if more:
        out["more_files"] = more
    summary += [_file_line(f) for f in shown[:8]]
    if len(files) > 8:
        summary.append(f"… and {len(files) - 8} more file(s)")
    out["changed"] = bool(git or files)
    if not out["changed"]:
        summary.append(f"nothing changed since seq {since.seq} ({since.what}): same branch, same "
                       "HEAD, every file the session knows as it recorded it")
    out["summary"] = summary
    return out


def _calls_before(records: list[Record]) -> dict[int, Record]:
    """For each record after the seq, the latest tool-call record at or before it (with the
    arguments its `started` record gave)."""
    out: dict[int, Record] = {}
    args: dict[str, Any] = {}
    last: Record | None = None
    for record in records:
        if record.get("type") == "operation":
            op = str(record.get("operation_id"))
            if "args" in record:
                args[op] = record["args"]
            last = {**record, "args": args.get(op)} if op in args else record
        if last is not None:
            out[record["seq"]] = last
    return out


def _call_name(call: Record | None) -> str:
    """`tool call toolu_1 (Bash: git checkout -b x)`."""
    if call is None:
        return "a tool call"
    shown = call.get("args")
    what = ""
    if isinstance(shown, dict):
        text = next((shown[k] for k in ("command", "cmd", "file_path", "path") if k in shown), None)
        if isinstance(text, list):
            text = " ".join(str(t) for t in text)
        if text:
            what = f": {flat(text, 80)}"
    return f"tool call {call.get('operation_id')} ({call.get('tool')}{what})"


def _moves(reader: Reader, target: Target, now: Replayed, seq: int, records: list[Record],
           calls: dict[int, Record]) -> list[Move]:
    """The baselines the session recorded after `seq`, each with who moved it."""
    out: list[Move] = []
    previous: Record | None = None
    for record in records:
        if record.get("type") == "baseline":
            call = calls.get(record["seq"])
            after_call = previous is not None and previous.get("type") in ("operation", "file_change")
            by = f"the agent: {_call_name(call)}" if call is not None and after_call else \
                "outside the session, between its runs (recorded at its restart)"
            out.append(Move(record["seq"], record.get("branch"), record.get("head"), by))
        previous = record
    for rollout in reader.rollouts_from(target, now, seq):
        meta = rollout.meta or {}
        if int(meta.get("seq", 0)) > seq and isinstance(meta.get("baseline"), dict):
            base = meta["baseline"]
            out.append(Move(int(meta["seq"]), base.get("branch"), base.get("head"),
                            "outside the session, while it was not running (recorded at its resume)"))
    return sorted(out, key=lambda m: m.seq)


def _git_change(kind: str, then: Difference, moves: list[Move], unrecorded: Difference | None,
                workspace: Workspace) -> dict[str, Any]:
    """The branch or HEAD change since the seq: then, now, each step and who made it."""
    field = "branch" if kind == "branch" else "head"
    value = (lambda v: v or "detached HEAD") if kind == "branch" else sha
    steps: list[dict[str, Any]] = []
    last = then.recorded
    for move in moves:
        moved_to = getattr(move, field)
        if moved_to != last:
            steps.append({"seq": move.seq, "to": value(moved_to), "by": move.by})
            last = moved_to
    if unrecorded is not None:
        steps.append({"seq": None, "to": value(unrecorded.current),
                      "by": "outside the session (it has not recorded this change)"})
    entry: dict[str, Any] = {"then": value(then.recorded), "now": value(then.current),
                             "steps": steps}
    if kind == "head" and isinstance(then.recorded, str):
        from ..recovery.advice import head_moved

        current = then.current if isinstance(then.current, str) else None
        entry["moved"] = flat(head_moved(workspace.root, then.recorded, current), 400)
    who = "; ".join(f"{s['by']}" for s in steps) or "unknown"
    moved = f" — {entry['moved']}" if entry.get("moved") else ""
    entry["line"] = f"{kind}: {entry['then']} → {entry['now']} (by {who}){moved}"
    return entry


def _files(now: Replayed, from_then: list[Difference], from_now: list[Difference], seq: int,
           calls: dict[int, Record]) -> list[dict[str, Any]]:
    """Every file changed since the seq: its versions since, who made them, the disk now."""
    from ..keeper.rewinding import history_of

    history = history_of(now.state)
    outside = {_path(d): d for d in from_now if d.kind in FILE_KINDS}
    paths = sorted({*(_path(d) for d in from_then if d.kind in FILE_KINDS),
                    *history.changed_after(seq), *outside})
    out = []
    for path in paths:
        versions = [v for v in history.files.get(path, []) if (v.get("seq") or 0) > seq]
        by = list(dict.fromkeys(str(v.get("author", "agent")) for v in versions))
        entry: dict[str, Any] = {"path": path, "versions": [
            {"seq": v.get("seq"), "author": v.get("author", "agent"), "change": v.get("change"),
             **({"after": _call_name(calls.get(v["seq"]))} if v.get("author", "agent") == "agent"
                and calls.get(v["seq"]) is not None else {})} for v in versions[-5:]]}
        if path in outside:
            gone = outside[path].kind == "file_missing"
            entry["disk"] = ("missing now: deleted outside the session" if gone else
                             "changed outside the session since its latest version (not recorded)")
            by.append("external")
        else:
            entry["disk"] = "as the session last recorded it"
        entry["by"] = by
        out.append(entry)
    return out


def _path(difference: Difference) -> str:
    recorded = difference.recorded
    return str(recorded.get("path") if isinstance(recorded, dict) else recorded)


_WHO = {"agent": "you (the agent)", "user": "the user", "external": "someone outside the session",
        "rewind": "a rewind"}


def _file_line(entry: dict[str, Any]) -> str:
    who = ", ".join(_WHO.get(b, b) for b in entry["by"]) or "nobody the session saw"
    return f"file {entry['path']}: changed by {who}; on disk: {entry['disk']}"
