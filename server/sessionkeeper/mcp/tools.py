"""The MCP tools as plain Python over a Keeper: find the session, read it, answer in short.

Each method is one tool; `meta` is the call's `_meta` (Codex names its session and turn there).
Reads go through `Reader` (the Keeper's replay) and the recovery contract's functions; the only
write is `rewind`, through a writable Keeper made for it, when `policy.rewind_setting` allows.
Every result starts with `session` (which session was asked about, and how it was found) and
`summary` (lines for the model); errors are our typed errors, raised for the server to turn into
tool errors. Invariant: a tool never re-runs, forces or guesses — a refusal says what to do.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ThreadBusy, ToolInputInvalid, ToolNotAllowed
from . import shape, target
from .reading import Reader, check_seq
from .since import SINCE as SINCE  # (the names a drift starts from, as the tool takes them)
from .since import since_of

if TYPE_CHECKING:
    from ..api import Keeper
    from ..recovery.findings import Difference, Invalidation
    from ..recovery.replay import Replayed
    from .target import Caller, Target

SERVER_NAME = "sessionkeeper"
"""The name the agents know the server by (their tools: mcp__sessionkeeper__<tool>)."""
READ_ONLY = ("drift_since", "in_doubt_operations", "file_history", "diff", "rewind_preview",
             "todos", "verifier")
_BUSY_WAIT_S = 5.0


class Tools:
    """The tools of one server: its caller (flags, environment) and a read-only Keeper."""

    def __init__(self, keeper: Keeper, caller: Caller, *,
                 writable: Callable[[], Keeper] | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.reader = Reader(keeper)
        self.caller = caller
        self.env = os.environ if env is None else env
        self._writable = writable

    @staticmethod
    def warm() -> None:
        """Import what the tools use (a server does it while the agent starts, not in a call)."""
        from ..recovery import advice, assess, baseline, diff, replay  # noqa: F401
        from ..recovery.subsystems import file_history, operations, worktree  # noqa: F401
        from . import drift, policy  # noqa: F401

    # ---- finding the session ----------------------------------------------------------------

    def session(self, meta: Mapping[str, Any] | None) -> tuple[Target, Replayed]:
        """The session a call is about, read now."""
        from dataclasses import replace

        found = target.find(self.reader.keeper, replace(self.caller, meta=meta, env=self.env))
        now = self.reader.replayed(found)
        call = (meta or {}).get(target.CLAUDE_CALL_META)
        if isinstance(call, str) and found.agent == "claude" and not self.caller.session_id \
                and not _started(now, call):
            return self._session_of_call(found, now, call)
        return found, now

    def _session_of_call(self, found: Target, now: Replayed, call: str) -> tuple[Target, Replayed]:
        """The Claude Code session whose journal holds this very call (its PreToolUse hook
        recorded it): after a /clear the process — and the server's environment — keep the old
        session id. The session found stays when no recent journal holds the call."""
        from .target import Target

        for row in self.reader.keeper.journal_keeper("claude").rows(
                workspace=os.path.realpath(self.caller.workspace), limit=5):
            if row.thread_id == found.thread_id:
                break  # newest first: an older session cannot be the one after the /clear
            other = Target(agent="claude", thread_id=row.thread_id,
                           how="the Claude Code session making this call (it began after the "
                               "server started: a /clear)")
            replayed = self.reader.replayed(other)
            if _started(replayed, call):
                return other, replayed
        return found, self.reader.replayed(found)

    def _head(self, found: Target, now: Replayed) -> dict[str, Any]:
        return {"agent": found.agent, "session_id": found.thread_id, "found": found.how,
                "workspace": now.meta.get("cwd"), "last_seq": now.restored_to_seq}

    # ---- drift ------------------------------------------------------------------------------

    def drift_since(self, since: int | str = "last_turn", *,
                    meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Branch, HEAD and files changed since a seq (or the turn's or the session's start)."""
        from .drift import drift

        found, now = self.session(meta)
        start = since_of(self.reader, found, now, since, meta)
        out = drift(self.reader, found, now, start)
        return shape.finished({"session": self._head(found, now), **out})

    # ---- operations -------------------------------------------------------------------------

    def in_doubt_operations(self, *, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Tool calls started and never finished, with what to check before running them again."""
        from ..keeper.rewinding import history_of
        from ..recovery.subsystems.operations import Operations

        found, now = self.session(meta)
        differences, _ = self._validated(now)
        ledger = now.state.get(Operations)
        history = history_of(now.state)
        outside = {str((d.recorded or {}).get("path")) for d in differences
                   if d.kind in ("file_changed", "file_missing") and isinstance(d.recorded, dict)}
        rows = []
        for op in ledger.in_doubt():
            if _ours(str(op.get("tool"))):
                continue  # this server's own calls: the one asking is running now
            seq = int(op.get("seq") or 0)
            record = self.reader.record_at(found, now, seq) or {}
            entry = ledger.entry(str(op["operation_id"])) or {}
            changed = sorted(set(history.changed_after(seq)) | outside)
            rows.append({"operation_id": op["operation_id"], "tool": op.get("tool"), "seq": seq,
                         "started_at": record.get("ts"),
                         "args_digest": entry.get("args_digest") or record.get("args_digest"),
                         "args": shape.args_shown(record.get("args")),
                         "files_changed_since": shape.capped(changed)[0],
                         "check": shape.check_before_rerun(str(op.get("tool")), record.get("args"), changed)})
        shown, more = shape.capped(rows)
        summary = [f"tool call {r['operation_id']} ({r['tool']}) started at seq {r['seq']} and never "
                   f"finished: {r['check']}" for r in shown[:8]] or [
            "no tool call of this session is in doubt: every one it started has finished"]
        return shape.finished({"session": self._head(found, now), "summary": summary,
                               "in_doubt": shown, **({"more": more} if more else {})})

    # ---- files ------------------------------------------------------------------------------

    def file_history(self, path: str, *, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The versions of one file the session knows, with their authors, and the disk now."""
        from ..keeper.rewinding import history_of
        from ..recovery.subsystems.file_history import FileHistory

        found, now = self.session(meta)
        cwd = str(now.meta.get("cwd"))
        rel = shape.workspace_path(cwd, path)
        history = history_of(now.state)
        versions = history.files.get(rel, [])
        one = FileHistory()
        one.files = {rel: versions} if versions else {}
        changed = one.disk_differences(self.reader.files_workspace(now)) if versions else []
        rows = [{"seq": v.get("seq"), "author": v.get("author", "agent"),
                 "change": v.get("change"), "hash": shape.sha(v.get("hash")),
                 "content": "kept" if v.get("hash") and not v.get("content")
                 else v.get("content") or ("deleted" if v.get("hash") is None else None),
                 **({"rewind_of_seq": v["rewind_seq"]} if v.get("rewind_seq") else {})}
                for v in versions]
        shown, more = shape.capped(rows[::-1])
        before = history.before(rel)
        if not versions:
            summary = [f"the session never recorded a change of {rel}"
                       + (" (it read its content before changing other files)"
                          if rel in history.seen else "")]
            disk = None
        elif changed:
            disk = ("missing now" if changed[0].kind == "file_missing"
                    else "changed outside the session since its latest version")
            summary = [f"{rel}: {len(versions)} version(s); on disk it is {disk}: re-read it "
                       "before editing, someone else changed it"]
        else:
            disk = "as the session last recorded it"
            summary = [f"{rel}: {len(versions)} version(s), the latest by "
                       f"{versions[-1].get('author', 'agent')} at seq {versions[-1].get('seq')}; "
                       "the disk holds it"]
        return shape.finished({
            "session": self._head(found, now), "summary": summary, "path": rel, "disk": disk,
            "before_session": None if before is None else {"hash": shape.sha(before.get("hash")),
                                                           "existed": before.get("hash") is not None},
            "versions_newest_first": shown, **({"more": more} if more else {})})

    def diff(self, path: str, from_seq: int | None = None, to_seq: int | None = None, *,
             meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Unified diffs of one file's versions after `from_seq` up to `to_seq`, with authors."""
        from ..recovery.diff import render

        found, now = self.session(meta)
        rel = shape.workspace_path(str(now.meta.get("cwd")), path)
        for seq in (from_seq, to_seq):
            if seq is not None:
                check_seq(now, seq)
        if from_seq is not None and to_seq is not None and from_seq > to_seq:
            raise ToolInputInvalid(f"from_seq {from_seq} is after to_seq {to_seq}")
        diffs = self.reader.keeper_of(found).diff(found.thread_id, from_seq=from_seq,
                                                  to_seq=to_seq, path=rel)
        text = shape.lines_capped(render(diffs)) if diffs else ""
        summary = [f"{len(diffs)} change(s) of {rel}: " + ", ".join(
            f"seq {d.new.seq} by {d.author}" for d in diffs[-8:])] if diffs else [
            f"no recorded change of {rel} in that range"]
        return shape.finished({"session": self._head(found, now), "summary": summary, "path": rel,
                               "diff": text})

    # ---- rewind -----------------------------------------------------------------------------

    def rewind_preview(self, to_seq: int | None = None, path: str | None = None, *,
                       meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """What a rewind would do to each file (nothing is changed)."""
        from .policy import rewind_setting

        found, now = self.session(meta)
        to, paths = self._rewind_target(now, to_seq, path)
        report = self.reader.keeper_of(found).rewind(found.thread_id, to_seq=to, paths=paths,
                                                     dry_run=True)
        setting = rewind_setting(str(now.meta.get("cwd")), self.env)
        out = shape.rewound(report, to, dry_run=True)
        out["rewind_allowed"] = setting.allowed
        if not setting.allowed:
            out["summary"].append(shape.not_allowed(setting.note))
        return shape.finished({"session": self._head(found, now), **out})

    def rewind(self, to_seq: int | None = None, path: str | None = None, undo: bool = False, *,
               meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Restore files to their versions at a seq (or undo the latest rewind), when the user's
        policy allows it; changes the session did not make are refused, never overwritten."""
        from ..api import Keeper
        from .policy import rewind_setting

        found, now = self.session(meta)
        setting = rewind_setting(str(now.meta.get("cwd")), self.env)
        if not setting.allowed:
            raise ToolNotAllowed(shape.not_allowed(setting.note))
        if undo and (to_seq is not None or path is not None):
            raise ToolInputInvalid("undo takes no to_seq or path: it undoes the latest rewind whole")
        to, paths = (None, None) if undo else self._rewind_target(now, to_seq, path)
        with (self._writable() if self._writable is not None else
              Keeper(self.reader.keeper.store.layout.root)) as keeper:  # closed after the rewind
            owner = keeper.journal_keeper(found.agent) if found.journal else keeper
            deadline = time.monotonic() + _BUSY_WAIT_S
            while True:
                try:
                    report = owner.rewind(found.thread_id, to_seq=to, paths=paths, undo=undo)
                    break
                except ThreadBusy:  # a hook of the agent holds the journal for a moment
                    if time.monotonic() >= deadline:
                        raise
                    time.sleep(0.05)
        return shape.finished({"session": self._head(found, now),
                               **shape.rewound(report, report.plan.to_seq, dry_run=False)})

    def _rewind_target(self, now: Replayed, to_seq: int | None,
                       path: str | None) -> tuple[int, list[str] | None]:
        """(the seq to rewind to, the paths or None for all): a path alone goes back to before the
        agent's latest change of it."""
        from ..keeper.rewinding import history_of

        rel = shape.workspace_path(str(now.meta.get("cwd")), path) if path is not None else None
        if to_seq is not None:
            check_seq(now, to_seq)
            return to_seq, [rel] if rel is not None else None
        if rel is None:
            raise ToolInputInvalid("give to_seq (rewind every file to that seq), path (undo the "
                                   "agent's latest change of that file), or both")
        mine = [v for v in history_of(now.state).files.get(rel, [])
                if v.get("author", "agent") == "agent" and isinstance(v.get("seq"), int)]
        if not mine:
            raise ToolInputInvalid(f"the agent never changed {rel} in this session: nothing to undo")
        return max(int(mine[-1]["seq"]) - 1, 0), [rel]

    # ---- what it was doing ------------------------------------------------------------------

    def todos(self, *, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The session's todo list as it last stood."""
        from ..recovery.subsystems.todos import Todos

        found, now = self.session(meta)
        todos = now.state.get(Todos)
        summary_data = todos.summary()
        items, more = shape.capped([{**i, "text": shape.flat(i.get("text"), 160)}
                                    for i in summary_data["items"]])
        if not summary_data["total"]:
            summary = ["no todo list recorded in this session"]
        else:
            open_items = [i for i in summary_data["items"] if i.get("status") != "done"]
            summary = [f"todos: {summary_data['done']}/{summary_data['total']} done (as of seq "
                       f"{todos.seq})"] + [f"open: {shape.flat(i.get('text'), 100)} "
                                           f"({i.get('status')})" for i in open_items[:5]]
        return shape.finished({"session": self._head(found, now), "summary": summary,
                               "done": summary_data["done"], "total": summary_data["total"],
                               "items": items, **({"more": more} if more else {})})

    def verifier(self, *, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The latest test run and review the session recorded, and whether each is stale."""
        from ..recovery.subsystems.verifier import VerifierState

        found, now = self.session(meta)
        state = now.state.get(VerifierState).summary()
        _, invalidated = self._validated(now)
        stale = [i.reason for i in invalidated if i.subsystem == "verifier"]
        tests, review = state.get("tests"), state.get("review")
        summary: list[str] = []
        if tests:
            summary.append(f"tests: {tests.get('passed')}/{tests.get('total')} passed at seq "
                           f"{tests.get('seq')}" + (f" ({shape.flat(tests['command'], 80)})"
                                                    if tests.get("command") else ""))
        if review:
            summary.append(f"review: {len(review.get('findings') or [])} finding(s) at seq "
                           f"{review.get('seq')}")
        if not summary:
            summary.append("no test run or review recorded in this session (the agents' hooks "
                           "record none: run the tests to know)")
        summary += [shape.flat(s, 300) for s in stale] or (
            ["not stale: no file changed after them"] if tests or review else [])
        return shape.finished({"session": self._head(found, now), "summary": summary,
                               "tests": tests, "review": review, "stale": bool(stale),
                               "stale_reasons": [shape.flat(s, 300) for s in stale]})

    def _validated(self, now: Replayed) -> tuple[list[Difference], list[Invalidation]]:
        """The session's state now validated against its workspace, as a resume check does."""
        return now.state.validate(self.reader.workspace(now))


def _started(now: Replayed, call: str) -> bool:
    """True when the session's ledger holds tool call `call` (its PreToolUse hook recorded it)."""
    from ..recovery.subsystems.operations import Operations

    return now.state.get(Operations).entry(call) is not None


def _ours(tool: str) -> bool:
    """True for a call of this server's own read-only tools (as the agents name them)."""
    return any(tool == name or tool.endswith(f"{SERVER_NAME}__{name}")
               or tool.endswith(f"{SERVER_NAME}.{name}") for name in READ_ONLY)


