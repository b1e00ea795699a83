"""An agent session's spooled tool calls become its journal's records: the operation ledger and the
file versions, exactly as the hooks would have recorded them at the time of each call.

    PreToolUse    the named files' content before the call (`seen`, when the journal lacks it),
                  then the operation `started` (id = the agent's call id, args digest)
    PostToolUse   every file the call wrote (after a shell call: every file git listed and every
                  file the journal knows) that differs from the last version known, the todo list
                  of a TodoWrite / update_plan, a new baseline when the shell call moved HEAD or
                  the branch, then the operation `committed` (its result when small) — `failed`,
                  with the error, for PostToolUseFailure

`records_for` derives a call's records from the call as the hook saw it (its files read then) and
the journal's state; `fold` appends them to the open journal (under its writer lock: content
compressed into blobs, the content before a first change read from git) and removes the spool
files it finished; `with_spool` adds them to rollouts read without writing (a read-only check),
completed from the history alone. Invariants: a call's last record carries its spool mark
(`subsystems.spooled`), so a call is folded once however often folding runs or is killed; a spool
file is removed only after the records folded from it are durable; a damaged spool line is
reported (a `Damage` of the rollout, a warning) and set aside, never folded, and never stops the
calls after it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from typing import TYPE_CHECKING, Any

from ..errors import InvalidEvent
from ..events import Durability, Record, plain
from ..recovery.content import HashOnly, Missing, Stored
from ..recovery.file_capture import captured_fields, complete_known
from ..recovery.subsystems.file_history import FileHistory
from ..recovery.subsystems.operations import Operations
from ..recovery.subsystems.spooled import Spooled
from ..recovery.subsystems.worktree import Worktree
from ..session.operations import args_digest
from ..session.tool_calls import SHELL_TOOLS, TODO_TOOLS, arguments, inside, small, todo_record
from ..store import spool
from ..store.reader import Damage

if TYPE_CHECKING:
    from ..recovery.content import Captured
    from ..recovery.state import SessionState
    from ..session.live import Session
    from ..store.reader import Rollout

log = logging.getLogger("sessionkeeper.journals")

Step = tuple[Record, "Captured | None"]
"""One record of a call, and for a file_change the file as the hook read it."""


def _object(value: object) -> dict[str, Any]:
    """A JSON object of a spooled call ({} for anything else)."""
    return value if isinstance(value, dict) else {}


def _captured(rel: str, found: object) -> Captured:
    """The capture a spool line keeps of one file, as `recovery.content` values."""
    if not isinstance(found, dict):
        return Missing(rel)
    digest, size, content = found.get("hash"), found.get("size"), found.get("content")
    if content == "stored" and isinstance(digest, str) and isinstance(size, int):
        return Stored(rel, digest, size)
    reason = content if content in ("binary", "too_large", "secret_file") else "not_a_file"
    return HashOnly(rel, reason, digest if isinstance(digest, str) else None,  # type: ignore[arg-type]
                    size if isinstance(size, int) else None)


def _now(captured: Captured) -> str | None:
    """The file's hash when the hook read it (None: absent or not a regular file)."""
    return None if isinstance(captured, Missing) else captured.hash


def _known(history: FileHistory, rel: str) -> tuple[bool, str | None]:
    """(whether the journal knows the file's content, the hash it knows)."""
    last = history.last(rel)
    if last is not None:
        return not last.get("unknown"), last.get("hash")
    seen = history.seen.get(rel)
    return (True, seen.get("hash")) if seen is not None else (False, None)


def _files(call: dict[str, Any], names: list[str], workspace: str) -> list[tuple[str, Captured]]:
    """(journal path, capture) of each name the call's files hold, relative to `workspace`."""
    files = _object(call.get("files"))
    base = os.path.realpath(str(call.get("cwd") or workspace))
    out = []
    for rel in names:
        if rel not in files:
            continue
        moved = inside([os.path.join(base, rel)], cwd=base, workspace=workspace)
        if moved:
            out.append((moved[0], _captured(moved[0], files[rel])))
    return out


def _file_steps(files: list[tuple[str, Captured]], history: FileHistory, *, seen: bool) -> list[Step]:
    steps: list[Step] = []
    for rel, got in files:
        now = _now(got)
        known, digest = _known(history, rel)
        if (known and digest == now) or (seen and now is None):  # unchanged; or to be created
            continue
        event: Record = {"type": "file_change", "path": rel,
                         "author": "external" if seen else "agent"}
        if seen:
            event["change"] = "seen"
        steps.append((event, got))
    return steps


def _operation(call: dict[str, Any], payload: dict[str, Any]) -> Record:
    operation: Record = {"type": "operation", "operation_id": str(call["call"]),
                         "tool": str(call["tool"])}
    if call["event"] == "PreToolUse":
        args = arguments(payload.get("input"))
        operation.update(status="started", args_digest=args_digest(args))
        if small(args):
            operation["args"] = args
        return operation
    failed = call["event"] == "PostToolUseFailure"
    result = {"error": payload.get("error")} if failed else payload.get("response")
    operation.update(status="failed" if failed else "committed",
                     result_persisted=small(result) and result is not None)
    if operation["result_persisted"]:
        operation["result"] = result
    elif result is not None:
        operation["data"] = {"result_digest": args_digest(result)}
    return operation


def _head_moved(call: dict[str, Any], state: SessionState, workspace: str) -> Record | None:
    """The new baseline when the shell call left HEAD or the branch elsewhere than recorded."""
    from ..recovery.baseline import from_head, head_from

    answer = _object(call.get("git")).get("head")
    cwd = str(call.get("cwd") or workspace)
    try:
        recorded = state.get(Worktree).recorded()
    except ValueError:
        return None  # nothing proves a move: the damage is left for the resume check to report
    head = head_from(cwd, answer.rstrip("\n")) if isinstance(answer, str) else None
    if recorded is None or head is None or not os.path.isdir(cwd):
        return None
    if (head.head, head.branch) == (recorded.head, recorded.branch):
        return None
    return {"type": "baseline", **plain(from_head(head, known=recorded))}


def records_for(call: dict[str, Any], state: SessionState, workspace: str) -> list[Step]:
    """The records one spooled call adds to a journal in `state` (in order); [] when none."""
    payload = _object(call.get("payload"))
    history = state.get(FileHistory)
    named = [str(n) for n in call.get("named") or [] if isinstance(n, str)]
    operation = _operation(call, payload)
    entry = state.get(Operations).entry(operation["operation_id"])
    duplicate = entry is not None and operation["status"] in entry["statuses"]
    op_steps: list[Step] = [] if duplicate else [(operation, None)]
    if call["event"] == "PreToolUse":
        return _file_steps(_files(call, named, workspace), history, seen=True) + op_steps
    edited = named
    if call.get("tool") in SHELL_TOOLS:
        listed = [str(p) for p in _object(call.get("git")).get("changed") or []]
        edited = list(dict.fromkeys([*named, *listed, *_as_called(call, history.files, workspace)]))
    steps = _file_steps(_files(call, edited, workspace), history, seen=False)
    if call.get("tool") in TODO_TOOLS and call["event"] == "PostToolUse" \
            and (todo := todo_record(payload.get("input"))) is not None:
        steps.append((todo, None))
    if call.get("tool") in SHELL_TOOLS and (moved := _head_moved(call, state, workspace)):
        steps.append((moved, None))
    return steps + op_steps  # the operation last: a call cut short is never taken as folded


def _as_called(call: dict[str, Any], paths: object, workspace: str) -> list[str]:
    """Journal paths as the call named files: relative to its cwd (the same but for a call run
    in a subdirectory)."""
    base = os.path.realpath(str(call.get("cwd") or workspace))
    if base == workspace:
        return [str(p) for p in paths]  # type: ignore[attr-defined]  # an iterable of paths
    out = [os.path.relpath(os.path.join(workspace, str(p)), base) for p in paths]  # type: ignore[attr-defined]
    return [p for p in out if not p.startswith("..")]


def _marked(steps: list[Step], token: str, end: int, at: object) -> list[Step]:
    """The steps with the call's spool mark on the last one."""
    if not steps:
        return steps
    record, got = steps[-1]
    data = dict(record.get("data") or {})
    data["spool"] = [token, end, at]
    return [*steps[:-1], ({**record, "data": data}, got)]


def fold(journal: Session, journal_root: str) -> int:
    """Fold every spooled call of the journal's session not in it yet; the calls folded."""
    folded = 0
    for path in spool.take(journal_root, journal.thread_id):
        lines = spool.read(path)
        done = journal.state.get(Spooled).folded(lines.token)
        for end, call in lines.calls:
            if end > done and lines.token is not None:
                steps = _marked(records_for(call, journal.state, journal.workspace),
                                lines.token, end, call.get("at"))
                _append(journal, steps)
                folded += 1
        journal.writer.recorder.sync()  # durable before the spool file goes
        for offset, reason in lines.damaged:
            log.warning("%s: a spooled call at byte %d was not folded: %s", path, offset, reason)
        for offset in lines.torn:
            log.warning("%s: a hook killed while writing left a torn line at byte %d (never "
                        "acknowledged)", path, offset)
        _set_aside(path, lines)
    if folded or not spool.known_paths(journal_root, journal.thread_id):
        history = journal.state.get(FileHistory)
        spool.set_known(journal_root, journal.thread_id,
                        [os.path.join(journal.workspace, p) for p in [*history.files, *history.seen]])
    return folded


def _append(journal: Session, steps: list[Step]) -> None:
    """Append a call's records in order; one file that cannot be recorded never keeps the others
    (or the operation) from being recorded."""
    for record, got in steps:
        try:
            if record["type"] != "file_change" or got is None:
                journal.record_built([record], durability=Durability.WRITTEN)
            elif isinstance(got, Stored) and journal.writer.store.blobs.unreadable([got.hash]):
                # its blob is gone or damaged (by hand): the version is kept by its hash
                journal.record_built([{**record, "after_hash": got.hash}],
                                     durability=Durability.WRITTEN)
            else:
                journal.record_captured(record, got, durability=Durability.WRITTEN)
        except InvalidEvent as exc:
            log.warning("%s not recorded: %s", record.get("path") or record["type"], exc)


def _set_aside(path: str, lines: spool.Lines) -> None:
    """Remove a folded spool file; one holding damaged lines is kept beside it for fsck."""
    if lines.damaged or lines.torn or lines.unfinished:
        os.replace(path, path[: -len(spool.FOLDING)] + spool.DAMAGED)
    else:
        os.unlink(path)


def with_spool(rollouts: list[Rollout], journal_root: str, session_id: str) -> list[Rollout]:
    """The journal's rollouts with its unfolded spooled calls added to the newest, and the damaged
    lines of its spool files reported as damage (read-only)."""
    paths = [*spool.taken(journal_root, session_id, ending=spool.DAMAGED),
             *spool.taken(journal_root, session_id), spool.spool_path(journal_root, session_id)]
    spools = [(path, spool.read(path)) for path in paths]
    if not rollouts or not any(lines.calls or lines.damaged for _path, lines in spools):
        return rollouts
    from ..recovery.replay import replay

    replayed = replay(rollouts)
    state, newest = replayed.state, replayed.latest
    workspace = os.path.realpath(str(replayed.meta.get("cwd") or "/"))
    seq, added, damage = newest.last_seq, [], list(newest.damage)
    for path, lines in spools:
        done = state.get(Spooled).folded(lines.token)
        for end, call in lines.calls:
            if end <= done or lines.token is None:
                continue
            for record, got in _marked(records_for(call, state, workspace), lines.token, end,
                                       call.get("at")):
                if got is not None:
                    record = complete_known({**record, **captured_fields(got)},
                                            state.get(FileHistory))
                seq += 1
                record = {"seq": seq, "ts": _stamp(call.get("at")), **record}
                state.apply(record)
                added.append(record)
        damage += [Damage(line=0, kind="checksum", detail=f"spooled tool call in "
                          f"{os.path.basename(path)} at byte {offset}: {reason}")
                   for offset, reason in lines.damaged]
    rollout = dataclasses.replace(newest, records=[*newest.records, *added], damage=damage)
    return [*rollouts[:-1], rollout]


def _stamp(at: object) -> str:
    """The `ts` of a record folded from a call the hook saw at `at` (seconds since the epoch)."""
    when = float(at) if isinstance(at, (int, float)) else time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + f".{int(when * 1000) % 1000:03d}Z"
