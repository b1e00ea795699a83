"""Thin handlers for every `session/` method: params in, one domain call, a converter out.

Each handler is registered through `rpc()`, which parses params into the method's pydantic model
and turns our typed errors into JSON-RPC errors with their codes (errors.py, PROTOCOL.md); any
other exception becomes an internal error (-32603) and the server carries on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from ..errors import SessionKeeperError
from .server import RpcError

if TYPE_CHECKING:
    from .server import SessionKeeperServer as Server

log = logging.getLogger("sessionkeeper.lsp")

Handler = Callable[["Server", Any], Awaitable[Any]]
HANDLERS: dict[str, tuple[str, Handler]] = {}


def rpc(method: str, params: str) -> Callable[[Handler], Handler]:
    """Register `fn` for `method`, with params parsed into `convert.<params>`."""

    def register(fn: Handler) -> Handler:
        HANDLERS[method] = (params, fn)
        return fn

    return register


def _wrap(method: str, model_name: str, fn: Handler) -> Callable[..., Awaitable[Any]]:
    async def handler(ls: Server, raw: Any) -> Any:
        try:
            from . import convert

            return await fn(ls, convert.parse(getattr(convert, model_name), raw))
        except SessionKeeperError as exc:
            log.info("%s: %s %s", method, exc.name, exc)
            raise RpcError(str(exc), code=exc.rpc_code, data=exc.to_dict()) from exc
        except JsonRpcException:
            raise
        except Exception as exc:
            if type(exc).__name__ == "ValidationError" and type(exc).__module__.startswith(
                    "pydantic"):
                from . import convert

                raise RpcError(convert.describe(exc), code=convert.INVALID_PARAMS,
                               data={"error": "invalid_params"}) from exc
            log.exception("%s failed", method)
            raise RpcError(f"{method} failed: {exc!r}", code=-32603,
                           data={"error": "internal_error"}) from exc

    handler.__name__ = fn.__name__
    return handler


async def dispatch(ls: Server, method: str, raw: Any) -> Any:
    """Call `method`'s handler as pygls would: params parsed, errors translated (in-process use)."""
    model_name, fn = HANDLERS[method]
    return await _wrap(method, model_name, fn)(ls, raw)


def register(server: Server) -> None:
    """Register every `session/` handler and the lifecycle features on `server`."""
    for method, (model_name, fn) in HANDLERS.items():
        server.feature(method)(_wrap(method, model_name, fn))
    from . import lifecycle

    server.feature(types.INITIALIZE)(lifecycle.on_initialize)
    server.feature(types.INITIALIZED)(lifecycle.on_initialized)
    server.feature(types.SHUTDOWN)(lifecycle.on_shutdown)
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(lifecycle.on_did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(lifecycle.on_did_close)


def _workspace(ls: Server, given: str | None) -> str:
    """The workspace a request is about: the one given, else the folder the editor opened."""
    from .convert import InvalidParams

    workspace = given or ls.workspace_root
    if not workspace:
        raise InvalidParams("workspace: required (no workspace folder is open)")
    return os.path.realpath(os.path.expanduser(workspace))


# ---- reading ---------------------------------------------------------------------------------------


@rpc("session/list", "ListParams")
async def session_list(ls: Server, p: Any) -> dict[str, Any]:
    """This workspace's threads, newest first, one page."""
    from . import convert

    workspace = os.path.realpath(p.workspace) if p.workspace else ls.workspace_root
    cursor = convert.decode_cursor(p.cursor)

    def work() -> dict[str, Any]:
        threads = ls.keeper.threads(workspace=workspace, include_archived=p.all, cursor=cursor,
                                    limit=p.limit)
        current = ls.session
        if current is not None:  # the open thread: its live state and the verdict it resumed with
            live = current.summary()
            threads = [convert.thread_summary(t, live=live, state=ls.verdict or t["state"])
                       if t["thread_id"] == current.thread_id else t for t in threads]
        more = len(threads) == p.limit
        cursor_out = convert.encode_cursor(threads[-1]) if more else None
        return {"threads": threads, "next_cursor": cursor_out}

    return await ls.run(work)


@rpc("session/show", "ThreadParams")
async def session_show(ls: Server, p: Any) -> dict[str, Any]:
    """A thread, its sessions and the last entries of its timeline."""
    from . import convert

    def work() -> dict[str, Any]:
        store = ls.keeper.store
        sessions = store.thread_sessions(p.thread_id)
        row = store.index().thread(p.thread_id) or {**sessions[-1], "session_count": len(sessions)}
        replayed = ls.keeper.replay(p.thread_id, full=True)
        entries, total = convert.timeline(replayed.rollouts)
        current = ls.session
        is_current = current is not None and current.thread_id == p.thread_id
        return {"thread": convert.thread_summary(row, live=current.summary() if is_current else None,
                                                 state=ls.verdict if is_current else None),
                "sessions": [convert.session_summary(s) for s in sessions],
                "timeline": entries, "timeline_total": total,
                "damaged": replayed.damaged}

    return await ls.run(work)


@rpc("session/current", "NoParams")
async def session_current(ls: Server, p: Any) -> dict[str, Any] | None:
    """The Status of the current session, or null."""
    return await ls.run(ls.status)


@rpc("session/checkResume", "CheckResumeParams")
async def session_check_resume(ls: Server, p: Any) -> dict[str, Any]:
    """Dry run of a resume: the report; nothing changes."""
    workspace = _workspace(ls, p.workspace)
    report = await ls.run(lambda: ls.keeper.check_resume(p.thread_id, workspace=workspace,
                                                         latest=p.latest or p.thread_id is None))
    return report.to_json()


# ---- writing ---------------------------------------------------------------------------------------


@rpc("session/start", "StartParams")
async def session_start(ls: Server, p: Any) -> dict[str, Any]:
    """Start a new thread in the workspace; it becomes the current session."""
    from .convert import InvalidParams

    workspace = _workspace(ls, p.workspace)
    if not os.path.isdir(workspace):
        raise InvalidParams(f"workspace: {workspace} is not a directory")
    session = await ls.run(lambda: ls.keeper.start(workspace, title=p.title,
                                                   permissions=p.permissions, model=p.model))
    await ls.make_current(session)
    return {"thread_id": session.thread_id, "session_id": session.session_id}


async def _current_session(ls: Server, session_id: str) -> Any:
    """The current session if it is `session_id`; read_only if it exists but is not open here."""
    from ..errors import SessionReadOnly

    session = ls.session
    if session is not None and session.session_id == session_id:
        return session
    await ls.run(lambda: ls.keeper.store.session_path(session_id))  # UnknownThread if none
    raise SessionReadOnly(f"session {session_id} is not open in this server "
                          "(start or resume its thread first)")


@rpc("session/record", "RecordParams")
async def session_record(ls: Server, p: Any) -> dict[str, Any]:
    """Append events to the current session; acks carry the seq each event got."""
    from . import convert

    types_given = {t for e in p.events if isinstance(t := e.get("type"), str)}
    reserved = sorted(types_given & convert.RESERVED_TYPES)
    if reserved:
        raise convert.InvalidParams(f"events: {', '.join(reserved)} records are written "
                                    "by the server itself (start/resume/clear/compact)")
    session = await _current_session(ls, p.session_id)
    acks = await ls.run(lambda: session.record_many(p.events, durability=p.durability))
    await ls.notify_status()
    return convert.acks(acks)


@rpc("session/clear", "ClearParams")
async def session_clear(ls: Server, p: Any) -> dict[str, Any]:
    """Drop the conversation context of the current session (cost, model, permissions stay)."""
    return await _transition(ls, p.session_id, lambda session: session.clear(p.reason))


@rpc("session/compact", "CompactParams")
async def session_compact(ls: Server, p: Any) -> dict[str, Any]:
    """Record a summary replacing the conversation so far (history stays in the log)."""
    return await _transition(ls, p.session_id, lambda session: session.compact(p.summary))


async def _transition(ls: Server, session_id: str, act: Callable[[Any], Any]) -> dict[str, Any]:
    """Run a lifecycle transition on the current session and tell the client."""
    session = await _current_session(ls, session_id)
    ack = await ls.run(lambda: act(session))
    await ls.notify_status(force=True)
    return {"seq": ack.seq}


async def resume_flow(ls: Server, thread_id: str | None, *, workspace: str,
                      decision: str | None, latest: bool) -> dict[str, Any]:
    """Resume a thread; on drift without a decision, ask the user when the client can."""
    report = await ls.run(lambda: ls.keeper.check_resume(thread_id, workspace=workspace,
                                                         latest=latest))
    thread = report.thread_id
    if decision is None and report.verdict == "drift" and ls.can_ask():
        decision = await ls.ask_drift(report) or "cancel"
    if ls.session is not None and ls.session.thread_id == thread:
        await ls.release_current()  # our own lock would make the resume see the thread busy
    report, session = await ls.run(lambda: ls.keeper.resume(thread, workspace=workspace,
                                                            decision=decision))
    if session is not None:
        continued = session.thread_id == thread
        await ls.make_current(session, verdict=report.verdict if continued else None,
                              drift=continued and report.verdict == "drift")
    elif ls.session is None:
        await ls.notify_status()
    if decision == "switch_back" and report.switch_back:
        ls.tell(f"Session Keeper: to switch back, run `{report.switch_back}`, then resume again.")
    return {"report": report.to_json(), "thread_id": session.thread_id if session else thread,
            "session_id": session.session_id if session else None}


@rpc("session/resume", "ResumeParams")
async def session_resume(ls: Server, p: Any) -> dict[str, Any]:
    """Resume a thread with the user's decision; the new session becomes current."""
    return await resume_flow(ls, p.thread_id, workspace=_workspace(ls, p.workspace),
                             decision=p.decision, latest=p.latest or p.thread_id is None)


@rpc("session/fork", "ForkParams")
async def session_fork(ls: Server, p: Any) -> dict[str, Any]:
    """Fork a thread at a seq into a new thread; the fork becomes the current session."""
    workspace = _workspace(ls, p.workspace) if p.workspace or ls.workspace_root else None
    session = await ls.run(lambda: ls.keeper.fork(p.thread_id, at_seq=p.at_seq,
                                                  workspace=workspace))
    await ls.make_current(session)
    return {"thread_id": session.thread_id, "session_id": session.session_id}


async def _set_archived(ls: Server, thread_id: str, archived: bool) -> dict[str, Any]:
    if archived and ls.session is not None and ls.session.thread_id == thread_id:
        await ls.make_current(None)  # close our own session of it first
    await ls.run(lambda: (ls.keeper.archive if archived else ls.keeper.unarchive)(thread_id))
    return {"thread_id": thread_id, "archived": archived}


@rpc("session/archive", "ThreadParams")
async def session_archive(ls: Server, p: Any) -> dict[str, Any]:
    """Move a thread to the archive (closing it here if it is current)."""
    return await _set_archived(ls, p.thread_id, True)


@rpc("session/unarchive", "ThreadParams")
async def session_unarchive(ls: Server, p: Any) -> dict[str, Any]:
    """Bring a thread back from the archive."""
    return await _set_archived(ls, p.thread_id, False)


# ---- maintenance -----------------------------------------------------------------------------------


class _Cancelled(Exception):
    """The client cancelled the work-done progress of a reindex."""


@rpc("session/reindex", "NoParams")
async def session_reindex(ls: Server, p: Any) -> dict[str, Any]:
    """Rebuild the index from the rollouts, reporting $/progress (cancellable)."""
    from pygls.exceptions import JsonRpcRequestCancelled

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
        if progress.tokens.get(token) is not None and progress.tokens[token].cancelled():
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
    result = {"threads": counts.get("threads", 0), "sessions": counts.get("sessions", 0),
              "damaged": counts.get("unindexable", 0)}
    if token is not None:
        progress.end(token, types.WorkDoneProgressEnd(
            message=f"{result['threads']} threads, {result['sessions']} sessions"))
    return result
