"""The hooks' Keeper of a store, and the digest each journal write leaves behind (`digest`).

Shared by the hooks' answers (`respond`) and the background fold (`catch_up`).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from . import digest

if TYPE_CHECKING:
    from pathlib import Path

    from ..api import Keeper
    from ..schema import ClientInfo


def keeper_of(store: str | None, *, read_only: bool = False) -> Keeper:
    """The Keeper of a store as the hooks use it (its journals' sessions are the hook's)."""
    from ..api import Keeper

    return Keeper(store, client=client, read_only=read_only)


def client() -> ClientInfo:
    """Who writes a journal's sessions (asked only when one starts: a tool hook loads no schema)."""
    from ..schema import ClientInfo

    return ClientInfo(name="sessionkeeper-hook")


def forget(root: Path, agent: str, session_id: str) -> None:
    """Drop the journal's digest before the journal is written: its stat only shows appends to
    the file it was taken of, not a new journal session (a resume elsewhere) in another file."""
    from ..errors import SessionKeeperError

    with contextlib.suppress(OSError, SessionKeeperError):
        digest.save(root, agent, session_id, None)


def remember(keeper: Keeper, root: Path, agent: str, session_id: str) -> None:
    """Leave the digest of the journal as it now stands (none when it cannot vouch for it)."""
    from ..errors import SessionKeeperError

    try:
        taken = digest.take(keeper.journal_keeper(agent).replay(session_id))
    except (SessionKeeperError, OSError, ValueError):
        taken = None
    with contextlib.suppress(OSError, SessionKeeperError):
        digest.save(root, agent, session_id, taken)
