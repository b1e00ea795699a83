"""`sessionkeeper mcp`: the MCP server the agents start (stdio), so the model can ask about its session.

The server (`mcp.server`, on our own stdio transport) is imported only here, when the command
runs. The store is opened read-only: the only write the server ever makes is a `rewind` the
user's policy allows.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Collection

from .common import COMMON, Subparsers


def add(sub: Subparsers, only: Collection[str] | None = None) -> None:
    """The one definition of `mcp`'s arguments (`only`: unused, it is the one command here)."""
    cmd = sub.add_parser("mcp", parents=[COMMON],
                         help="MCP server on stdio: the agent asks about its own session")
    cmd.add_argument("--agent", choices=["claude", "codex"],
                     help="whose journals to answer from (default: the one that calls)")
    cmd.add_argument("--session", metavar="ID",
                     help="answer about this agent session (default: the calling agent's own)")
    cmd.add_argument("--workspace", metavar="DIR",
                     help="the workspace whose current session to answer about when the agent "
                          "names none (default: the current directory)")
    cmd.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve the tools on stdin/stdout until the agent closes them."""
    from ..api import Keeper
    from ..mcp import server
    from ..mcp.target import Caller
    from ..mcp.tools import Tools

    keeper = Keeper(args.store, read_only=True)
    caller = Caller(agent=args.agent, session_id=args.session,
                    workspace=os.path.abspath(args.workspace or os.getcwd()))
    server.serve(Tools(keeper, caller, writable=lambda: Keeper(args.store)))
    return 0
