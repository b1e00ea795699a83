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
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
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
from ..recovery.command_hooks import registry_from
from ..recovery.plan import plan
from ..recovery.report import Decision, Report, Verdict
from ..recovery.subsystems.file_history import FileHistory
from . import convert, gitops
from .checkout import explained_by_move, git_moved_event
from .gitops import Head
from .live import Live, assess_live
from .options import ServerOptions
from .protocol import ResumeResult, Status, ThreadsChanged
from .rpc import InvalidParams, unstructure
from .watch import Batch, Change, Watcher, file_change_events

if TYPE_CHECKING:
    from ..agents.importer import AgentSources
    from ..api import Keeper
    from ..session import Session
    from .agent_roots import RootsWatcher

log = logging.getLogger("sessionkeeper.lsp")

DID_CHANGE = "session/didChange"
DID_CHANGE_THREADS = "session/didChangeThreads"
ENV_DURABILITY = "SESSIONKEEPER_DURABILITY"
ENV_REDACTION = "SESSIONKEEPER_REDACTION"
DRIFT_ACTIONS: dict[str, Decision] = {"Fork": "fork", "Switch back": "switch_back",
                                      "Continue": "continue", "Cancel": "cancel"}
"""The drift question's answers, in the order shown: nothing that continues comes first."""
_UNSET: Any = object()
T = TypeVar("T")


def raw_json_converter() -> Any:
    """pygls' converter, but custom-method params and results stay plain JSON (not namedtuples)."""
    conv = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        names = tuple(attrs.fields_dict(cls))
        conv.register_structure_hook(
            cls, lambda obj, c, names=names: c(**{n: obj.get(n) for n in names}))
    return conv


class SessionKeeperServer(LanguageServer):
    """The language server and its state: one store, at most one current (writable) session."""

    def __init__(self, *, store: str | None = None) -> None:
        # Documents: open/close only (which files are the user's); their edits are not needed.
        super().__init__("sessionkeeper", __version__, types.TextDocumentSyncKind.None_,
                         converter_factory=raw_json_converter)
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

    # ---- the domain, on its worker thread ---------------------------------------------------

    @property
    def keeper(self) -> Keeper:
        """The Keeper, created on first need (domain worker only)."""
        if self._keeper is None:
            from ..api import Keeper  # the store, the index, filelock: on first need only
            from ..schema import ClientInfo

            name = "sessionkeeper-lsp" + (f" ({self.editor})" if self.editor else "")
            content: dict[str, Any] = {"allow_secret_files": self.options.allowSecretFiles}
            if self.options.contentLimitBytes is not None:
                content["content_limit_bytes"] = self.options.contentLimitBytes
            self._keeper = Keeper(self.store_path, durability=self._durability(),
                                  redact=self._redact(), hooks=registry_from(self.options.hooks),
                                  client=ClientInfo(name=name[:100], version=__version__),
                                  agents=self._agent_sources(), **content)
            from ..listing import BaselineCache

            self._keeper.baselines = BaselineCache()  # picker pages reuse the workspace's git
        return self._keeper

    def _agent_sources(self) -> AgentSources | None:
        """The agents' logs the options name (all, from their env/default roots, by default)."""
        from ..agents.importer import AgentSources
        from ..errors import InvalidId

        given = self.options.agents
        if given is not None and not given:
            return None
        roots = {name: (value,) for name, value in (("codex", self.options.codexHome),
                                                    ("claude", self.options.claudeHome)) if value}
        try:
            return AgentSources(agents=tuple(given) if given is not None else None, roots=roots)
        except InvalidId as exc:
            log.warning("agents: %s (reading every agent's logs from their default roots)", exc)
            self.option_problems.append(f"agents: {exc}")
            return AgentSources()

    def import_agents(self, progress: Callable[[int, int], None] | None = None, *,
                      loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Import the agents' changed files, then watch their roots (domain worker only; `loop`:
        the event loop a change of the roots is reported on)."""
        self._agents_loop = loop or self._agents_loop
        keeper = self.keeper
        if keeper.agent_sources is None:
            return
        watcher = self.agent_watcher
        if watcher is not None and watcher.stale():  # a root that was missing exists now
            self.stop_watching_agents()
            keeper.agents_changed()
        keeper.import_agents(progress)
        if self.agent_watcher is None and self.options.watch and not self._closed:
            from .agent_roots import RootsWatcher

            sources = keeper.agent_sources
            roots = [str(r) for name in sources.enabled() for r in sources.roots_of(name)]
            self.agent_watcher = RootsWatcher(roots, on_change=self._agents_changed)
            self.agent_watcher.start()
            keeper.watching_agents = True

    def _agents_changed(self) -> None:
        """The agents' roots changed (watcher thread): import on the next listing, tell the client."""
        if self._keeper is not None:
            self._keeper.agents_changed()
        loop = self._agents_loop
        if loop is not None and not loop.is_closed() and not self._closed:
            loop.call_soon_threadsafe(self.notify_threads, "agents")

    def stop_watching_agents(self) -> None:
        """Stop watching the agents' roots (listings then stat them every time)."""
        watcher, self.agent_watcher = self.agent_watcher, None
        if watcher is not None:
            watcher.stop()
        if self._keeper is not None:
            self._keeper.watching_agents = False

    def _durability(self) -> str:
        value = self.options.durability or os.environ.get(ENV_DURABILITY) or "written"
        if value not in ("none", "written", "durable"):
            log.warning("unknown durability %r; using 'written'", value)
            return "written"
        return value

    def _redact(self) -> bool:
        if self.options.redaction is not None:
            return self.options.redaction
        return os.environ.get(ENV_REDACTION, "1").strip().lower() not in ("0", "false", "no", "off")

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

    # ---- watching the workspace --------------------------------------------------------------

    def ensure_watching(self, session: Session) -> None:
        """Watch the current session's workspace and git state (started lazily, restarted on a
        new root); event-loop thread."""
        if not self.options.watch or self._closed:
            return
        root = session.workspace
        if self.watcher is not None and self.watcher.root == root:
            return
        self.stop_watching()
        self._loop = asyncio.get_running_loop()
        store_root = str(self._keeper.store.layout.root) if self._keeper else None
        dirs = gitops.git_dirs(root)
        self.watcher = Watcher(root, ignore=[store_root] if store_root else [],
                               git_dirs=[dirs.git_dir, dirs.common_dir] if dirs else [],
                               on_changes=self._on_batch_threadsafe)
        self.watcher.start()

    def _on_batch_threadsafe(self, batch: Batch) -> None:
        """The watcher thread hands a batch to the event loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            asyncio.run_coroutine_threadsafe(self.handle_batch(batch), loop)

    async def handle_batch(self, batch: Batch) -> None:
        """Record a watched batch, refresh live drift, and tell the client what changed."""
        try:
            moved = await self.run(self.on_batch, batch)
        except Exception:  # noqa: BLE001 - a watcher must never take the server down
            log.exception("could not handle a watched batch")
            return
        await self.notify_status()
        if moved:
            self.notify_threads("git")

    def refresh_live(self, session: Session) -> None:
        """Check the session against its workspace now (domain worker only)."""
        if self.session is not session:
            return
        self.git_head = gitops.head(session.workspace)
        self.live = assess_live(session.state, session.workspace)

    def on_batch(self, batch: Batch) -> bool:
        """Record a batch in the current session (domain worker); True when HEAD moved.

        Files a move of HEAD explains are the checkout's: one git_moved record, no file_change.
        """
        session = self.session
        if session is None or self.watcher is None or session.workspace != self.watcher.root:
            return False
        root, old = session.workspace, self.git_head
        if batch.git and self._keeper is not None and self._keeper.baselines is not None:
            self._keeper.baselines.invalidate(root)  # the picker's git cache (it checks too)
        now = gitops.head(root) if batch.git or batch.changes else old
        changes, moved = batch.changes, now != old
        if moved:
            explained = explained_by_move(root, old, now, [c.path for c in changes])
            changes = [c for c in changes if c.path not in explained]
            history = session.state.get(FileHistory)
            event = git_moved_event(old, now, explained=explained,
                                    seen=lambda p: history.last(p) is not None)
            try:
                session.record(event)
            except Exception:  # noqa: BLE001
                log.exception("could not record a move of HEAD")
            log.info("HEAD moved: %s -> %s (%d file(s) by the move)", old, now, len(explained))
        self.record_changes(changes)
        self.refresh_live(session)
        return moved

    def stop_watching(self) -> None:
        """Stop the workspace watcher, if one runs."""
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()

    def record_changes(self, changes: list[Change]) -> int:
        """Record watched file changes in the current session (domain worker only); returns count."""
        session = self.session
        if session is None or self.watcher is None:
            return 0
        root = session.workspace
        if root != self.watcher.root:
            return 0
        events = file_change_events(
            changes, last=session.state.get(FileHistory).last,
            author_of=lambda change: self._author_of(root, change))
        if not events:
            return 0
        try:
            session.record_many(list(events))
        except Exception:  # noqa: BLE001 - a watcher must never take the server down
            log.exception("could not record %d file change(s)", len(events))
            return 0
        log.info("recorded %d file change(s)", len(events))
        return len(events)

    def _author_of(self, root: str, change: Change) -> str:
        """user: changed on disk while the editor syncs nothing, or open in the editor; else external."""
        if change.deleted:
            return "external"
        if not self.documents_synced:
            return "user"
        return "user" if os.path.join(root, change.path) in self.open_paths else "external"

    # ---- shutting down ------------------------------------------------------------------------

    def close_all(self) -> None:
        """Stop the watcher and close the current session (from any thread; idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.stop_watching()
        self.stop_watching_agents()
        session, self.session = self.session, None
        if session is not None:
            try:
                self._domain.submit(_close_quietly, session).result(timeout=30)
            except Exception:  # noqa: BLE001
                log.exception("could not close the current session")
        self._domain.shutdown(wait=False)

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
