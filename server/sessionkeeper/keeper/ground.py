"""What every service of the Keeper stands on: its settings, and the store, client and hooks made
on first need (so making a Keeper does no work), with the sessions it holds open."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ..events import Durability
from ..policy import ResetPolicy, SessionPolicy
from ..store.store import Store

if TYPE_CHECKING:
    from ..agents.importer import AgentSources
    from ..recovery.lifecycle import HookRegistry
    from ..schema import ClientInfo
    from ..session.live import Session


class Ground:
    """One store, its defaults, who records and the hooks its sessions run; nothing opened yet."""

    def __init__(self, store: Path | str | None, *, durability: Durability | str, redact: bool,
                 snapshot_min_bytes: int, client: ClientInfo | Callable[[], ClientInfo] | None,
                 hooks: HookRegistry | None, reset_policy: ResetPolicy | str, read_only: bool,
                 content_limit_bytes: int, allow_secret_files: bool, blob_cap_bytes: int | None,
                 agents: AgentSources | None, spooled: bool, shared_index: str | None) -> None:
        """The Keeper's arguments (see `Keeper`), checked."""
        self._root = store
        self.spooled = spooled
        self.shared_index = shared_index
        self.agent_sources = agents
        self.read_only = read_only
        self.durability = Durability(durability)
        self.policy = SessionPolicy(redact=redact, snapshot_min_bytes=snapshot_min_bytes,
                                    content_limit_bytes=content_limit_bytes,
                                    allow_secret_files=allow_secret_files)
        self.allow_secret_files = allow_secret_files
        self.blob_cap_bytes = blob_cap_bytes
        self._client = client
        self._hooks = hooks
        self.reset_policy = ResetPolicy(reset_policy)
        self.live = OpenSessions()

    @cached_property
    def client(self) -> ClientInfo:
        """Who records: given, or the Python API."""
        from ..schema import ClientInfo

        given = self._client() if callable(self._client) else self._client
        return given or ClientInfo(name="sessionkeeper-python")

    @cached_property
    def hooks(self) -> HookRegistry:
        """The hooks its sessions run: given, else an empty registry (made on first need)."""
        from ..recovery.lifecycle import HookRegistry

        return self._hooks if self._hooks is not None else HookRegistry()

    @cached_property
    def store(self) -> Store:
        """The store, opened on first need."""
        return Store(self._root, read_only=self.read_only)

    def close(self) -> None:
        """Close the open sessions (each as its own `close` does), then the store's index."""
        from contextlib import ExitStack

        with ExitStack() as closing:  # last in, first out; each runs whatever another raises
            if "store" in self.__dict__:  # made: its index may be open
                closing.callback(self.store.close_index)
            for session in list(self.live.values()):
                closing.callback(session.close)


class OpenSessions(dict[str, "Session"]):
    """The sessions a Keeper holds open, by thread id: each is its thread's only writer."""

    def flush(self, thread_id: str | None = None) -> None:
        """Write out buffered (`none`) records and index rows of the open sessions (of one thread),
        so that reads see everything they acknowledged."""
        for thread, session in list(self.items()):
            if thread_id in (None, thread) and session.writer.recorder.read_only_reason is None:
                session.flush()

    def adopt(self, session: Session) -> Session:
        """Hold `session` open (until it closes)."""
        self[session.thread_id] = session
        return session

    def closed(self, session: Session) -> None:
        """Forget a session that closed."""
        if self.get(session.thread_id) is session:
            del self[session.thread_id]
