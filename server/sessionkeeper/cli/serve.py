"""`sessionkeeper serve`: the language server on stdio (the default command) or TCP."""

from __future__ import annotations

import argparse
import os
from collections.abc import Collection

from .common import COMMON, Subparsers


def add(sub: Subparsers, only: Collection[str] | None = None) -> None:
    """The one definition of `serve`'s arguments (`only`: unused, it is the one command here)."""
    serve = sub.add_parser("serve", parents=[COMMON], help="language server on stdio (default)")
    serve.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", type=_host_port,
                       help="listen on a TCP port instead")
    serve.add_argument("--log-level", default=os.environ.get("SESSIONKEEPER_LOG", "WARNING"),
                       help="stderr log level (default WARNING, or $SESSIONKEEPER_LOG)")
    serve.set_defaults(run=run)


def _host_port(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not port.isdigit():
        raise argparse.ArgumentTypeError(f"--tcp wants HOST:PORT, not {value!r}")
    return host or "127.0.0.1", int(port)


def run(args: argparse.Namespace) -> int:
    """Serve until the client exits us."""
    from ..lsp.app import serve

    return serve(store=args.store, tcp=args.tcp, log_level=args.log_level)
