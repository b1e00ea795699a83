"""The server as a program: every feature registered on a fresh server, and `serve`."""

from __future__ import annotations

import logging
import sys
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from . import features, lifecycle  # noqa: F401 - features registers every session/ method
from .rpc import METHODS, RpcError, wrap
from .server import SessionKeeperServer
from .stdio import start_io


class _DomainErrorFilter(logging.Filter):
    """Drop pygls' traceback logs for errors we raise on purpose (they are answers, not bugs)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, (RpcError, JsonRpcException))


async def dispatch(ls: SessionKeeperServer, name: str, raw: Any) -> Any:
    """Call a method as pygls would: params structured, errors translated (in-process use)."""
    return await wrap(METHODS[name])(ls, raw)


def create_server(*, store: str | None = None) -> SessionKeeperServer:
    """A server with every `session/` method and lifecycle feature registered."""
    server = SessionKeeperServer(store=store)
    for method in METHODS.values():
        server.feature(method.name)(wrap(method))
    server.feature(types.INITIALIZE)(lifecycle.on_initialize)
    server.feature(types.INITIALIZED)(lifecycle.on_initialized)
    server.feature(types.SHUTDOWN)(lifecycle.on_shutdown)
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(lifecycle.on_did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(lifecycle.on_did_close)
    return server


def setup_logging(level: str) -> None:
    """Log to stderr only; pygls (which logs whole payloads at INFO) only at DEBUG or above WARNING."""
    value = getattr(logging, level.upper(), None)
    value = value if isinstance(value, int) else logging.WARNING
    logging.basicConfig(stream=sys.stderr, level=value,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(value if value <= logging.DEBUG else
                                        max(value, logging.WARNING))
    for name in ("pygls", "pygls.protocol.json_rpc"):
        logging.getLogger(name).addFilter(_DomainErrorFilter())
    logging.getLogger("watchfiles").setLevel(max(value, logging.WARNING))  # one line per batch


def serve(*, store: str | None, tcp: tuple[str, int] | None = None, log_level: str = "WARNING") -> int:
    """Run the language server on stdio, or on TCP at `tcp` (host, port)."""
    setup_logging(log_level)
    server = create_server(store=store)
    if tcp is not None:
        server.start_tcp(*tcp)
    else:
        start_io(server)
    return 0
