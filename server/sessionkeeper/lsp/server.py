"""The Session Keeper language server: its state (lazy Keeper, current session) and its flows.

Invariants:
- the Keeper and the current Session are touched only on the one domain worker thread (`run`),
  so domain calls are serialized and never block the event loop;
- notifications, progress and requests to the client are sent from the event-loop thread only;
- nothing heavy happens before the first request: no Keeper (so no store, no index), no
  GitPython, no watcher. `initialize` costs what pygls itself costs;
- live drift (`self.live`) is the current session checked against its workspace; it is computed
  when the session becomes current and after every watched batch (files, HEAD, refs), never by
  polling, and pushed with session/didChange; HEAD moving also sends session/didChangeThreads.

The Keeper's construction and the agents' roots are `keeping`'s (mixin `KeeperHost`), watching
the workspace is `watching`'s (mixin `WorkspaceWatching`); this module holds the state they share,
the domain worker, the current session, the resume flow and the questions to the user.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)

from .. import __version__
from ..recovery.verdicts import Decision, Verdict
from . import convert, resident
from .keeping import KeeperHost
from .live import Live
from .options import ServerOptions
from .protocol import ResumeResult, Status, ThreadsChanged
from .rpc import InvalidParams, PlainJson, unstructure
from .watch import Watcher
from .watching import WorkspaceWatching
from .wire import SessionKeeperProtocol

if TYPE_CHECKING:  # the resume's plan and report are loaded by the first resume
    from ..api import Keeper
    from ..recovery.report import Report
    from ..session.live import Session
    from .agent_roots import RootsWatcher
    from .gitops import Head

log = logging.getLogger("sessionkeeper.lsp")

DID_CHANGE = "session/didChange"
DID_CHANGE_THREADS = "session/didChangeThreads"
DRIFT_ACTIONS: dict[str, Decision] = {"Fork": "fork", "Switch back": "switch_back",
                                      "Continue": "continue", "Cancel": "cancel"}
"""The drift question's answers, in the order shown: nothing that continues comes first."""
_UNSET: Any = object()
T = TypeVar("T")


def raw_json_converter() -> Any:
    """pygls' converter, but custom-method params and results stay plain JSON (not namedtuples),
    and a result already converted (`PlainJson`) is sent without walking it again."""
    conv = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        names = tuple(attrs.fields_dict(cls))
        conv.register_structure_hook(
            cls, lambda obj, c, names=names: c(**{n: obj.get(n) for n in names}))
    response = conv.get_unstructure_hook(JsonRPCResponseMessage)

    def unstructure_response(message: JsonRPCResponseMessage) -> Any:
        if type(message.result) is PlainJson:
            return {"id": message.id, "jsonrpc": message.jsonrpc, "result": message.result}
        return response(message)

    conv.register_unstructure_hook(JsonRPCResponseMessage, unstructure_response)
    return conv


class SessionKeeperServer(KeeperHost, WorkspaceWatching, LanguageServer):
    """The language server and its state: one store, at most one current (writable) session."""

    def __init__(self, *, store: str | None = None) -> None:
        # Documents: open/close only (which files are the user's); their edits are not needed.
        super().__init__("sessionkeeper", __version__, types.TextDocumentSyncKind.None_,
                         protocol_cls=SessionKeeperProtocol, converter_factory=raw_json_converter)
        self.store_path = store
        self.workspace_root: str | None = None
        self.options = ServerOptions()
        self.option_problems: list[str] = []
        self.editor: str | None = None
        self.session: Session | None = None  # the current Session; touched on the domain worker only
        self.verdict: Verdict | None = None  # verdict of the resume that made it current
        self.drift = False  # the current session continues over recorded differences
        self.open_paths: set[str] = set()  # files open in the editor (textDocument/didOpen)
        self.documents_synced = False  # the client sends didOpen at all
        self.watcher: Watcher | None = None
        self.agent_watcher: RootsWatcher | None = None  # the agents' roots, once first listed
        self._agents_loop: asyncio.AbstractEventLoop | None = None
        self.live: Live | None = None  # live drift of the current session (domain worker)
        self.git_head: Head | None = None  # HEAD of the watched workspace, as last seen
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keeper: Keeper | None = None
        self._last_status: Any = _UNSET
        self._domain = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sessionkeeper-domain")
        self._closed = False
        self.resident: subprocess.Popen[bytes] | None = None  # the CLI's reader (`resident`)
        self._resident_at = 0.0  # when it was last started (monotonic)

    # ---- the domain, on its worker thread ---------------------------------------------------

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run a domain call on the domain worker and await its result."""
        return await asyncio.wrap_future(self._domain.submit(fn, *args, **kwargs))

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future[Any]:
        """Queue a domain call from any thread (the watcher uses this); returns a Future."""
        return self._domain.submit(fn, *args)

    def status(self) -> Status | None:
        """The Status of the current session, or None (domain worker only)."""
        if self.session is None:
            return None
        return convert.status(self.session, verdict=self.verdict, drift=self.drift, live=self.live)

    def workspace_of(self, given: str | None) -> str:
        """The workspace a request is about: the one given, else the folder the editor opened."""
        workspace = given or self.workspace_root
        if not workspace:
            raise InvalidParams("workspace: required (no workspace folder is open)")
        return os.path.realpath(os.path.expanduser(workspace))

    # ---- the current session ----------------------------------------------------------------

    async def release_current(self) -> None:
        """Close the current session (snapshot, fsync, unlock) without telling the client yet."""
        old, self.session = self.session, None
        self.verdict, self.drift = None, False
        if old is not None:
            await self.run(_close_quietly, old)

    async def make_current(self, session: Session | None, *, verdict: Verdict | None = None,
                           drift: bool = False, why: str | None = None) -> None:
        """Switch the current session (closing the previous one) and tell the client.

        `why` (started, forked, resumed, archived...) also tells the client the listing changed.
        """
        old, self.session = self.session, session
        self.verdict, self.drift = (verdict, drift) if session is not None else (None, False)
        self.live, self.git_head = None, None
        if old is not None and old is not session:
            await self.run(_close_quietly, old)
        if session is not None and self.options.watch:
            await self.run(self.refresh_live, session)
        await self.notify_status(force=True)
        if why:
            self.notify_threads(why)
        if session is None:
            self.stop_watching()
        else:
            self.ensure_watching(session)

    async def notify_status(self, *, force: bool = False) -> None:
        """Send session/didChange if the status changed since the last one sent (or if forced)."""
        status = unstructure(await self.run(self.status))
        if force or status != self._last_status:
            self._last_status = status
            self.protocol.notify(DID_CHANGE, status)

    def notify_threads(self, reason: str) -> None:
        """Tell the client the listing changed (session/didChangeThreads); event-loop thread."""
        self.protocol.notify(DID_CHANGE_THREADS, unstructure(ThreadsChanged(reason=reason)))

    # ---- flows ---------------------------------------------------------------------------------

    async def resume_flow(self, thread_id: str | None, *, workspace: str,
                          decision: Decision | None, latest: bool) -> ResumeResult:
        """Resume a thread; on drift without a decision, ask the user when the client can."""
        check = await self.run(lambda: self.keeper.check_resume(thread_id, workspace=workspace,
                                                                latest=latest))
        thread = check.thread_id
        if decision is None and check.verdict == "drift" and self.can_ask():
            decision = await self.ask_drift(check) or "cancel"
        if check.agent != "native" and await self.run(self.keeper.is_agent_thread, thread):
            # the agent's thread: its own command continues it; it never becomes current here
            report, command = await self.run(lambda: self.keeper.resume_agent(
                thread, workspace=workspace, decision=decision))
            log.info("agent thread %s: %s, command %s", thread, report.verdict,
                     command.display if command else None)
            return ResumeResult(report=report, thread_id=thread, session_id=None, command=command)
        from ..recovery.plan import plan

        current = self.session is not None and self.session.thread_id == thread
        if current and plan(check, decision).kind == "stop":  # keep it: nothing would continue
            return ResumeResult(report=dataclasses.replace(check, decision=decision),
                                thread_id=thread, session_id=None)
        if current and plan(check, decision).kind in ("continue", "relocate"):
            await self.release_current()  # our own lock would make the resume see the thread busy
        report, session = await self.run(lambda: self.keeper.resume(thread, workspace=workspace,
                                                                    decision=decision))
        if session is not None:
            continued = session.thread_id == thread
            await self.make_current(session, verdict=report.verdict if continued else None,
                                    drift=continued and report.verdict == "drift",
                                    why="resumed" if continued else "forked")
        elif self.session is None:
            await self.notify_status()
        if decision == "switch_back" and report.switch_back:
            self.tell(f"Session Keeper: to switch back, run `{report.switch_back}`, then resume again.")
        return ResumeResult(report=report, thread_id=session.thread_id if session else thread,
                            session_id=session.session_id if session else None)

    # ---- asking the user ----------------------------------------------------------------------

    def client_window(self) -> types.WindowClientCapabilities | None:
        """The client's window capabilities (None before initialize or when it declares none)."""
        capabilities = getattr(self.protocol, "client_capabilities", None)
        return capabilities.window if capabilities is not None else None

    def can_ask(self) -> bool:
        """True if the client handles window/showMessageRequest and asking is not turned off."""
        if not self.options.askOnDrift:
            return False
        window = self.client_window()
        return window is not None and window.show_message is not None

    async def ask_drift(self, report: Report) -> Decision | None:
        """Ask the user what to do about a drift; the decision, or None if dismissed."""
        offered = [title for title, choice in DRIFT_ACTIONS.items() if choice in report.choices]
        picked = await self.window_show_message_request_async(types.ShowMessageRequestParams(
            type=types.MessageType.Warning, message=convert.drift_message(report),
            actions=[types.MessageActionItem(title=t) for t in offered]))
        return DRIFT_ACTIONS.get(picked.title) if picked is not None else None

    def tell(self, message: str, *, kind: types.MessageType = types.MessageType.Info) -> None:
        """Show a message in the editor (window/showMessage)."""
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    # ---- shutting down ------------------------------------------------------------------------

    def close_all(self) -> None:
        """Stop the watcher and close the current session (from any thread; idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.stop_watching()
        self.stop_watching_agents()
        resident.stop(self.resident)
        session, self.session = self.session, None
        if session is not None:
            try:
                self._domain.submit(_close_quietly, session).result(timeout=30)
            except Exception:  # noqa: BLE001
                log.exception("could not close the current session")
        self._domain.shutdown(wait=False)

    def start_resident(self, *, again: bool = False) -> None:
        """Start the command line's resident reader of this store, unless ours runs or the server
        is closing; `again`: only once ours ended and no other answers at the socket (another
        window's served, then closed; or ours saw the package change), at most every
        `resident.RETRY_S` (each listing asks this)."""
        if self._closed or (self.resident is None and again) or (
                self.resident is not None and self.resident.poll() is None):
            return
        now = time.monotonic()
        if again and (now - self._resident_at < resident.RETRY_S
                      or resident.answering(self.store_path)):
            return
        self._resident_at = now
        self.resident = resident.start(self.store_path)

    def shutdown(self) -> None:
        """Close what we hold, then stop pygls."""
        self.close_all()
        super().shutdown()


def _close_quietly(session: Session) -> None:
    """Close a session; a failure is logged, never raised (the lock is released either way)."""
    try:
        session.close()
    except Exception:  # noqa: BLE001
        log.exception("closing session %s failed", session.session_id)
