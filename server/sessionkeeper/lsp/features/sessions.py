"""Thin handlers for the sessions themselves: list, show, start, record, resume, fork, archive...

Registered with `rpc.rpc`; params are structured and errors translated in `rpc.wrap`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from ...errors import SessionReadOnly
from ...events import KEEPER_TYPES, Durability
from .. import convert
from ..agent_roots import ImportProgress
from ..protocol import (
    ArchiveResult,
    CheckResumeParams,
    ClearParams,
    CompactParams,
    ForkParams,
    ListParams,
    ListResult,
    NoParams,
    RecordParams,
    RecordResult,
    ReindexResult,
    ResumeParams,
    ResumeResult,
    SeqResult,
    ShowResult,
    StartParams,
    StartResult,
    Status,
    ThreadParams,
)
from ..rpc import InvalidParams, rpc
from ..server import SessionKeeperServer as Server

# ---- reading ---------------------------------------------------------------------------------------

if TYPE_CHECKING:  # a started server loads no session, schema or report types
    from ...recovery.report import Report
    from ...session.live import Session
    from ...store.recorder import Ack


@rpc("session/list", ListParams)
async def session_list(ls: Server, p: ListParams) -> ListResult:
    """This workspace's threads, newest first, one page."""
    ls.start_resident(again=True)  # the CLI's resident, if another window's or an old one ended
    workspace = None if p.all_workspaces else (
        os.path.realpath(p.workspace) if p.workspace else ls.workspace_root)
    cursor = convert.decode_cursor(p.cursor)
    loop = asyncio.get_running_loop()
    progress = ImportProgress(ls, loop)

    def work() -> ListResult:
        ls.look_ahead(workspace)
        try:
            ls.import_agents(progress, loop=loop)
        finally:
            progress.end("done")
        # one thread more than the page: a next page is announced only when it holds a thread
        threads = ls.keeper.threads(workspace=workspace, include_archived=p.all,
                                    archived_only=p.archived_only, cursor=cursor,
                                    limit=p.limit + 1, agent=p.agent, machine=p.machine)
        more = len(threads) > p.limit
        threads = threads[:p.limit]
        current = ls.session
        if current is not None:  # the open thread: its live state and the verdict it resumed with
            threads = [convert.live_summary(t, current, verdict=ls.verdict, live=ls.live)
                       if t.thread_id == current.thread_id else t for t in threads]
        return ListResult(threads=threads,
                          next_cursor=convert.encode_cursor(threads[-1]) if more else None)

    return await ls.run(work)


@rpc("session/show", ThreadParams)
async def session_show(ls: Server, p: ThreadParams) -> ShowResult:
    """A thread, its sessions and the last entries of its timeline."""

    def work() -> ShowResult:
        sessions = ls.keeper.thread_sessions(p.thread_id)
        row = ls.keeper.store.thread_row(p.thread_id)
        replayed = ls.keeper.replay(p.thread_id, full=True)
        entries, total = convert.timeline(replayed.rollouts)
        current = ls.session
        summary = convert.row_summary(row, sessions)
        if row is not None and row.agent in ("codex", "claude"):  # where its baseline came from, as listed
            summary = dataclasses.replace(summary, baseline="hook" if ls.keeper.journaled([row]) else "log")
        if current is not None and current.thread_id == p.thread_id:
            summary = convert.live_summary(summary, current, verdict=ls.verdict, live=ls.live)
        return ShowResult(thread=summary, sessions=[convert.session_summary(s) for s in sessions],
                          timeline=entries, timeline_total=total, damaged=replayed.damaged)

    return await ls.run(work)


@rpc("session/current", NoParams)
async def session_current(ls: Server, p: NoParams) -> Status | None:
    """The Status of the current session, or null."""
    return await ls.run(ls.status)


@rpc("session/checkResume", CheckResumeParams)
async def session_check_resume(ls: Server, p: CheckResumeParams) -> Report:
    """Dry run of a resume: the report; nothing changes."""
    workspace = ls.workspace_of(p.workspace)
    return await ls.run(lambda: ls.keeper.check_resume(p.thread_id, workspace=workspace,
                                                       latest=p.latest or p.thread_id is None))


# ---- writing ---------------------------------------------------------------------------------------


@rpc("session/start", StartParams)
async def session_start(ls: Server, p: StartParams) -> StartResult:
    """Start a new thread in the workspace; it becomes the current session."""
    workspace = ls.workspace_of(p.workspace)
    if not os.path.isdir(workspace):
        raise InvalidParams(f"workspace: {workspace} is not a directory")
    session = await ls.run(lambda: ls.keeper.start(workspace, title=p.title,
                                                   permissions=p.permissions, model=p.model))
    await ls.make_current(session, why="started")
    return StartResult(thread_id=session.thread_id, session_id=session.session_id)


async def _current_session(ls: Server, session_id: str) -> Session:
    """The current session if it is `session_id`; read_only if it exists but is not open here."""
    session = ls.session
    if session is not None and session.session_id == session_id:
        return session
    await ls.run(lambda: ls.keeper.store.session_path(session_id))  # UnknownThread if none
    raise SessionReadOnly(f"session {session_id} is not open in this server "
                          "(start or resume its thread first)")


@rpc("session/record", RecordParams)
async def session_record(ls: Server, p: RecordParams) -> RecordResult:
    """Append events to the current session; acks carry the seq each event got."""
    reserved = sorted({t for e in p.events if isinstance(t := e.get("type"), str)} & KEEPER_TYPES)
    if reserved:
        raise InvalidParams(f"events: {', '.join(reserved)} records are written "
                            "by the server itself (start/resume/clear/compact)")
    session = await _current_session(ls, p.session_id)
    level = Durability(p.durability) if p.durability else None
    acks = await ls.run(lambda: session.record_many(list(p.events), durability=level))
    await ls.notify_status()
    return convert.acks(acks)


@rpc("session/clear", ClearParams)
async def session_clear(ls: Server, p: ClearParams) -> SeqResult:
    """Drop the conversation context of the current session (cost, model, permissions stay)."""
    return await _transition(ls, p.session_id, lambda session: session.clear(p.reason))


@rpc("session/compact", CompactParams)
async def session_compact(ls: Server, p: CompactParams) -> SeqResult:
    """Record a summary replacing the conversation so far (history stays in the log)."""
    return await _transition(ls, p.session_id, lambda session: session.compact(p.summary))


async def _transition(ls: Server, session_id: str, act: Callable[[Session], Ack]) -> SeqResult:
    """Run a lifecycle transition on the current session and tell the client."""
    session = await _current_session(ls, session_id)
    ack = await ls.run(lambda: act(session))
    await ls.notify_status(force=True)
    return SeqResult(seq=ack.seq)


@rpc("session/resume", ResumeParams)
async def session_resume(ls: Server, p: ResumeParams) -> ResumeResult:
    """Resume a thread with the user's decision; the new session becomes current."""
    return await ls.resume_flow(p.thread_id, workspace=ls.workspace_of(p.workspace),
                                decision=p.decision, latest=p.latest or p.thread_id is None)


@rpc("session/fork", ForkParams)
async def session_fork(ls: Server, p: ForkParams) -> StartResult:
    """Fork a thread at a seq into a new thread; the fork becomes the current session."""
    workspace = ls.workspace_of(p.workspace) if p.workspace or ls.workspace_root else None
    session = await ls.run(lambda: ls.keeper.fork(p.thread_id, at_seq=p.at_seq,
                                                  workspace=workspace))
    await ls.make_current(session, why="forked")
    return StartResult(thread_id=session.thread_id, session_id=session.session_id)


async def _set_archived(ls: Server, thread_id: str, archived: bool) -> ArchiveResult:
    if archived and ls.session is not None and ls.session.thread_id == thread_id:
        await ls.make_current(None)  # close our own session of it first
    await ls.run(lambda: (ls.keeper.archive if archived else ls.keeper.unarchive)(thread_id))
    ls.notify_threads("archived" if archived else "unarchived")
    return ArchiveResult(thread_id=thread_id, archived=archived)


@rpc("session/archive", ThreadParams)
async def session_archive(ls: Server, p: ThreadParams) -> ArchiveResult:
    """Move a thread to the archive (closing it here if it is current)."""
    return await _set_archived(ls, p.thread_id, True)


@rpc("session/unarchive", ThreadParams)
async def session_unarchive(ls: Server, p: ThreadParams) -> ArchiveResult:
    """Bring a thread back from the archive."""
    return await _set_archived(ls, p.thread_id, False)


# ---- maintenance -----------------------------------------------------------------------------------


class _Cancelled(Exception):
    """The client cancelled the work-done progress of a reindex."""


@rpc("session/reindex", NoParams)
async def session_reindex(ls: Server, p: NoParams) -> ReindexResult:
    """Rebuild the index from the rollouts, reporting $/progress (cancellable)."""
    progress = ls.work_done_progress
    token = p.workDoneToken
    window = ls.client_window()
    if token is None and window is not None and window.work_done_progress:
        token = f"sessionkeeper-reindex-{uuid.uuid4()}"
        await progress.create_async(token)
    loop = asyncio.get_running_loop()
    if token is not None:
        progress.begin(token, types.WorkDoneProgressBegin(
            title="Session Keeper: reindex", message="scanning rollouts", percentage=0,
            cancellable=True))

    def report(done: int, total: int) -> None:  # on the domain worker
        if token is None:
            return
        future = progress.tokens.get(token)
        if future is not None and future.cancelled():
            raise _Cancelled
        loop.call_soon_threadsafe(progress.report, token, types.WorkDoneProgressReport(
            message=f"{done}/{total} rollouts", percentage=int(100 * done / max(total, 1))))

    try:
        counts = await ls.run(ls.keeper.reindex, report)
    except _Cancelled:
        if token is not None:
            progress.end(token, types.WorkDoneProgressEnd(message="cancelled"))
        raise JsonRpcRequestCancelled("reindex cancelled; the previous index is kept") from None
    except BaseException:
        if token is not None:
            progress.end(token, types.WorkDoneProgressEnd(message="failed"))
        raise
    result = ReindexResult(threads=counts.get("threads", 0), sessions=counts.get("sessions", 0),
                           damaged=counts.get("unindexable", 0))
    if token is not None:
        progress.end(token, types.WorkDoneProgressEnd(
            message=f"{result.threads} threads, {result.sessions} sessions"))
    ls.notify_threads("reindexed")
    return result
