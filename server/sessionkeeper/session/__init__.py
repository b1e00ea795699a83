"""One live session of a thread: what it records and how (`live.Session`), its tool calls'
operations (`operations`), the tool-call records shared with the thin hooks (`tool_calls`) and the
validation of what a caller gives it (`validate`).

It may import the store, recovery and the vocabulary, never the Keeper or a surface. This file
loads nothing (a thin hook imports `tool_calls` from here): `Session` is looked up on first use.
"""

from __future__ import annotations


def __getattr__(name: str) -> object:
    """`sessionkeeper.session.Session`, as before the package had rooms."""
    if name == "Session":
        from .live import Session

        return Session
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
