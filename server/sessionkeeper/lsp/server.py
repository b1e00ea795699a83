"""The Session Keeper language server: its state (lazy Keeper, current session, workspace) and `serve`.

Invariants:
- the Keeper and the current Session are touched only on the one domain worker thread (`run`),
  so domain calls are serialized and never block the event loop;
- notifications, progress and requests to the client are sent from the event-loop thread only;
- nothing heavy happens before the first request: no Keeper (so no pydantic, no store scan), no
  GitPython, no watcher. `initialize` costs what pygls itself costs.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)

from .. import __version__

log = logging.getLogger("sessionkeeper.lsp")

DID_CHANGE = "session/didChange"
ENV_DURABILITY = "SESSIONKEEPER_DURABILITY"
ENV_REDACTION = "SESSIONKEEPER_REDACTION"
DRIFT_ACTIONS = {"Continue": "continue", "Switch back": "switch_back", "Fork": "fork",
                 "Cancel": "cancel"}
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


class RpcError(JsonRpcException):
    """A JSON-RPC error answer with one of our codes (see PROTOCOL.md, errors.py)."""


class _DomainErrorFilter(logging.Filter):
    """Drop pygls' traceback logs for errors we raise on purpose (they are answers, not bugs)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, RpcError)


class SessionKeeperServer(LanguageServer):
    """The language server and its state: one store, at most one current (writable) session."""

    def __init__(self, *, store: str | None = None) -> None:
        # Documents: open/close only (which files are the user's); their edits are not needed.
        super().__init__("sessionkeeper", __version__, types.TextDocumentSyncKind.None_,
                         converter_factory=raw_json_converter)
        self.store_path = store
        self.workspace_root: str | None = None
        self.options: dict[str, Any] = {}
        self.editor: str | None = None
        self.session: Any = None  # the current Session; touched on the domain worker only
        self.verdict: str | None = None  # verdict of the resume that made the session current
        self.drift = False  # the current session continues over recorded differences
        self.open_paths: set[str] = set()  # files open in the editor (textDocument/didOpen)
        self.documents_synced = False  # the client sends didOpen at all
        self.watcher: Any = None
        self._keeper: Any = None
        self._last_status: Any = _UNSET
        self._domain = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sessionkeeper-domain")
        self._closed = False

    # ---- the domain, on its worker thread ---------------------------------------------------

    @property
    def keeper(self) -> Any:
        """The Keeper, created on first need (domain worker only)."""
        if self._keeper is None:
            from ..api import Keeper
            from ..events import ClientInfo

            name = "sessionkeeper-lsp" + (f" ({self.editor})" if self.editor else "")
            self._keeper = Keeper(self.store_path, durability=self._durability(),
                                  redact=self._redact(), hooks=self._hooks(),
                                  client=ClientInfo(name=name[:100], version=__version__))
        return self._keeper

    def _hooks(self) -> Any:
        """Command hooks from initializationOptions.hooks; a bad spec is reported, not fatal."""
        from ..recovery.command_hooks import HookSpecError, registry_from

        specs = self.options.get("hooks") or []
        try:
            return registry_from(specs if isinstance(specs, list) else [])
        except HookSpecError as exc:
            self.tell(f"Session Keeper: hooks ignored: {exc}", kind=types.MessageType.Warning)
            return registry_from([])

    def _durability(self) -> str:
        value = self.options.get("durability") or os.environ.get(ENV_DURABILITY) or "written"
        if value not in ("none", "written", "durable"):
            log.warning("unknown durability %r; using 'written'", value)
            return "written"
        return value

    def _redact(self) -> bool:
        value = self.options.get("redaction")
        if isinstance(value, bool):
            return value
        return os.environ.get(ENV_REDACTION, "1").strip().lower() not in ("0", "false", "no", "off")

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run a domain call on the domain worker and await its result."""
        return await asyncio.wrap_future(self._domain.submit(fn, *args, **kwargs))

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Any:
        """Queue a domain call from any thread (the watcher uses this); returns a Future."""
        return self._domain.submit(fn, *args)

    def status(self) -> dict[str, Any] | None:
        """The Status of the current session, or None (domain worker only)."""
        from . import convert

        if self.session is None:
            return None
        return convert.status(self.session, verdict=self.verdict, drift=self.drift)

    # ---- the current session ----------------------------------------------------------------

    async def release_current(self) -> None:
        """Close the current session (snapshot, fsync, unlock) without telling the client yet."""
        old, self.session = self.session, None
        self.verdict, self.drift = None, False
        if old is not None:
            await self.run(_close_quietly, old)

    async def make_current(self, session: Any, *, verdict: str | None = None,
                           drift: bool = False) -> None:
        """Switch the current session (closing the previous one) and tell the client."""
        old, self.session = self.session, session
        self.verdict, self.drift = (verdict, drift) if session is not None else (None, False)
        if old is not None and old is not session:
            await self.run(_close_quietly, old)
        await self.notify_status(force=True)
        if session is None:
            self.stop_watching()
        else:
            self.ensure_watching(session)

    async def notify_status(self, *, force: bool = False) -> None:
        """Send session/didChange if the status changed since the last one sent (or if forced)."""
        status = await self.run(self.status)
        if force or status != self._last_status:
            self._last_status = status
            self.protocol.notify(DID_CHANGE, status)

    # ---- asking the user ----------------------------------------------------------------------

    def client_window(self) -> types.WindowClientCapabilities | None:
        """The client's window capabilities (None before initialize or when it declares none)."""
        capabilities = getattr(self.protocol, "client_capabilities", None)
        return capabilities.window if capabilities is not None else None

    def can_ask(self) -> bool:
        """True if the client handles window/showMessageRequest and asking is not turned off."""
        if self.options.get("askOnDrift") is False:
            return False
        window = self.client_window()
        return window is not None and window.show_message is not None

    async def ask_drift(self, report: Any) -> str | None:
        """Ask the user what to do about a drift; the decision, or None if dismissed."""
        from . import convert

        offered = [title for title, choice in DRIFT_ACTIONS.items() if choice in report.choices]
        picked = await self.window_show_message_request_async(types.ShowMessageRequestParams(
            type=types.MessageType.Warning, message=convert.drift_message(report),
            actions=[types.MessageActionItem(title=t) for t in offered]))
        return DRIFT_ACTIONS.get(picked.title) if picked is not None else None

    def tell(self, message: str, *, kind: types.MessageType = types.MessageType.Info) -> None:
        """Show a message in the editor (window/showMessage)."""
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    # ---- watching the workspace --------------------------------------------------------------

    def ensure_watching(self, session: Any) -> None:
        """Watch the current session's workspace (started lazily, restarted on a new root)."""
        if self.options.get("watch") is False or self._closed:
            return
        root = session.writer.meta["cwd"]
        if self.watcher is not None and self.watcher.root == root:
            return
        self.stop_watching()
        from .watch import Watcher

        store_root = str(self._keeper.store.layout.root) if self._keeper else None
        self.watcher = Watcher(root, ignore=[store_root] if store_root else [],
                               on_changes=lambda changes: self.submit(self.record_changes, changes))
        self.watcher.start()

    def stop_watching(self) -> None:
        """Stop the workspace watcher, if one runs."""
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()

    def record_changes(self, changes: list[Any]) -> int:
        """Record watched file changes in the current session (domain worker only); returns count."""
        from .watch import file_change_events

        session = self.session
        if session is None or self.watcher is None:
            return 0
        root = session.writer.meta["cwd"]
        if root != self.watcher.root:
            return 0
        history = session.state["file_history"]
        events = file_change_events(
            changes, last=history.last,
            author_of=lambda change: self._author_of(root, change))
        if not events:
            return 0
        try:
            session.record_many(events)
        except Exception:  # noqa: BLE001 - a watcher must never take the server down
            log.exception("could not record %d file change(s)", len(events))
            return 0
        log.info("recorded %d file change(s)", len(events))
        return len(events)

    def _author_of(self, root: str, change: Any) -> str:
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


def _close_quietly(session: Any) -> None:
    """Close a session; a failure is logged, never raised (the lock is released either way)."""
    try:
        session.close()
    except Exception:  # noqa: BLE001
        log.exception("closing session %s failed", session.session_id)


def create_server(*, store: str | None = None) -> SessionKeeperServer:
    """A server with every `session/` handler registered."""
    from . import handlers

    server = SessionKeeperServer(store=store)
    handlers.register(server)
    return server


def _setup_logging(level: str) -> None:
    """Log to stderr only; pygls (which logs whole payloads at INFO) only at DEBUG or above WARNING."""
    value = getattr(logging, level.upper(), None)
    value = value if isinstance(value, int) else logging.WARNING
    logging.basicConfig(stream=sys.stderr, level=value,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(value if value <= logging.DEBUG else
                                        max(value, logging.WARNING))
    for name in ("pygls", "pygls.protocol.json_rpc"):
        logging.getLogger(name).addFilter(_DomainErrorFilter())


def serve(argv: list[str] | None = None) -> int:
    """Run the language server: `--stdio` (default) or `--tcp HOST:PORT`, store from `--store`."""
    parser = argparse.ArgumentParser(prog="sessionkeeper serve",
                                     description="Session Keeper language server")
    parser.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port instead")
    parser.add_argument("--store", metavar="DIR",
                        help="store directory (default: $SESSIONKEEPER_HOME or the user data dir)")
    parser.add_argument("--log-level", default=os.environ.get("SESSIONKEEPER_LOG", "WARNING"),
                        help="stderr log level (default WARNING, or $SESSIONKEEPER_LOG)")
    args, unknown = parser.parse_known_args(argv if argv is not None else sys.argv[1:])
    _setup_logging(args.log_level)
    if unknown:
        log.warning("ignoring unknown arguments %s", unknown)
    server = create_server(store=args.store)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            parser.error(f"--tcp wants HOST:PORT, not {args.tcp!r}")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0


if __name__ == "__main__":
    # `python -m sessionkeeper.lsp.server`: run the canonical module, not this `__main__` copy,
    # so handlers and server share one set of classes.
    from sessionkeeper.lsp.server import serve as _serve

    sys.exit(_serve(sys.argv[1:]))
