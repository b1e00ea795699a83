"""Session Keeper's own journal of an agent session: where the agents' hooks record, and its reading.

A journal is a native thread whose thread id is the agent's session id, kept in a store of its
own at `<store>/journals/<agent>/` (rollouts, locks, index and blobs of its own). So it is never
listed as a thread, and the main store's reindex and gc never see it (gc cannot drop a journal's
blobs); fsck checks each journal store as a store of its own (`FsckReport.journals`). Its
records are ordinary ones, validated and redacted like any: `baseline` (a real git baseline
with its SHA), `lifecycle`, `operation`, `file_change` (content in the journal store's blobs),
`permissions`, `model`, `todo`, `verifier`. The agent-thread check merges them with the agent's
log (`recovery.sources`) and prefers them: they are exact.

The tool hooks do not write the journal: they spool their calls (`store.spool`, created with the
journal), and the journal folds them in (`journal_fold`) whenever it is opened for writing —
first thing, under its lock — and, without writing, whenever it is read.

Invariants: one writer per journal (the thread lock), taken with a short wait because an agent
may run several hooks at once; a journal is created only under that lock, after checking again
that no other process created it meanwhile, so it never gets two first sessions; a journal that
exists has a spool (so a tool hook that finds none goes the full way, which creates the journal).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from .. import ids
from ..errors import InvalidId, InvalidWorkspace, SessionKeeperError, ThreadBusy, UnknownThread
from ..store import spool
from ..store.layout import ensure_private_dir

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..recovery.replay import Replayed
    from ..session.live import Session
    from ..store.index import ThreadRow
    from ..store.reader import Rollout
    from ..store.store import Store
    from .ground import Ground

JOURNALS = "journals"
"""The folder of the journal stores inside a store."""
WAIT_S = 5.0
"""How long `journal()` waits for a journal another hook process holds open."""
_AGENT_NAMES = ("codex", "claude")


def journal_root(store_root: os.PathLike[str] | str, agent: str) -> str:
    """Where the journals of `agent` live in a store."""
    return os.path.join(os.fspath(store_root), JOURNALS, _agent_name(agent))


def journal_roots(store_root: os.PathLike[str] | str) -> dict[str, str]:
    """The journal stores a store holds (those made so far), by agent name."""
    folder = os.path.join(os.fspath(store_root), JOURNALS)
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return {}
    out = {}
    for name in names:
        try:
            agent = _agent_name(name)
        except InvalidId:  # not a journal store
            continue
        if os.path.isdir(os.path.join(folder, name)):
            out[agent] = os.path.join(folder, name)
    return out


def _agent_name(agent: str) -> str:
    """A known agent's name (it becomes part of a path); InvalidId otherwise."""
    from .. import agents

    if not isinstance(agent, str) or agent not in agents.names():
        raise InvalidId(f"unknown agent {agent!r}: expected one of {agents.names()}")
    return agent


def _session_id(raw: object) -> str:
    """The agent's session id in canonical form (a UUID, as both agents write them)."""
    from ..agents.base import canonical_uuid

    found = canonical_uuid(raw)
    if found is None:
        raise InvalidId(f"invalid agent session id {str(raw)[:60]!r}: expected a UUID")
    return ids.thread_id(found)


class JournalKeeper(Protocol):
    """What a journal store's own Keeper is used for here (a `Keeper`)."""

    @property
    def store(self) -> Store: ...

    def attach(self, session_id: str) -> Session: ...

    def start(self, workspace: str | os.PathLike[str], *, thread_id: str | None = None,
              agent: str | None = None, lock: Any = None, reason: str = ...) -> Session: ...

    def close(self) -> None: ...


K = TypeVar("K", bound=JournalKeeper)


class Journals(Generic[K]):
    """The journals of agent sessions, each store's read and written by a Keeper of its own."""

    def __init__(self, ground: Ground, keeper: Callable[..., K]) -> None:
        """`keeper`: makes the Keeper of a journal store (`Keeper` itself, given its settings)."""
        self.ground = ground
        self._make = keeper
        self._keepers: dict[str, K] = {}

    @property
    def store(self) -> Store:
        """The main store (the journal stores live inside it)."""
        return self.ground.store

    def close(self) -> None:
        """Close the journal stores' Keepers (their open journals and indexes)."""
        from contextlib import ExitStack

        with ExitStack() as closing:
            for keeper in self._keepers.values():
                closing.callback(keeper.close)

    def journal_keeper(self, agent: str) -> K:
        """The Keeper of `agent`'s journal store (for reading, diffs and rewinds of a journal)."""
        name = _agent_name(agent)
        if name not in self._keepers:
            ground, root = self.ground, journal_root(self.store.layout.root, name)
            if not ground.read_only:
                ensure_private_dir(self.store.layout.root / JOURNALS, within=self.store.layout.root)
            self._keepers[name] = self._make(
                root, durability=ground.durability, redact=ground.policy.redact,
                client=lambda: ground.client, read_only=ground.read_only,
                content_limit_bytes=ground.policy.content_limit_bytes,
                allow_secret_files=ground.policy.allow_secret_files, spooled=True)
        return self._keepers[name]

    def journal(self, agent: str, agent_session_id: str, *,
                workspace: str | os.PathLike[str] | None = None,
                wait_s: float = WAIT_S) -> Session:
        """The writable journal of an agent session: re-opened to append, else created.

        Creating needs `workspace` (the session's cwd): its git baseline is captured into the
        journal's session_meta and the files already changed there are kept as `seen`. The tool
        calls its spool holds are folded in first. Waits up to `wait_s` while another process
        holds the journal (then ThreadBusy). Close the session (or use it as a context manager)
        to release it.
        """
        from .journal_fold import fold

        thread = _session_id(agent_session_id)
        sub = self.journal_keeper(agent)
        deadline = time.monotonic() + wait_s
        pause = 0.005
        while True:
            try:
                session = _open(sub, agent, thread, workspace)
                break
            except ThreadBusy:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.1)
        try:
            spool.create(str(sub.store.layout.root), thread)  # a journal from before spools
            fold(session, str(sub.store.layout.root))
        except BaseException:
            session.close()
            raise
        return session

    def journal_rollouts(self, agent: str, agent_session_id: str) -> list[Rollout]:
        """Every rollout of an agent session's journal, read in full, oldest first ([] when none),
        with its spooled tool calls: folded in first when this Keeper may write and the journal
        is free, else added to what is read."""
        from .journal_fold import with_spool

        thread = _session_id(agent_session_id)
        if not os.path.isdir(journal_root(self.store.layout.root, agent)):
            return []
        sub = self.journal_keeper(agent)
        if not self.ground.read_only and _newest(sub, thread) is not None:
            try:
                self.journal(agent, thread, wait_s=0).close()
            except (SessionKeeperError, OSError) as exc:  # busy or unwritable: read as it is
                import logging  # here: a listing never loads logging

                logging.getLogger("sessionkeeper.journals").info(
                    "journal of %s session %s not folded now: %s", agent, thread, exc)
        try:
            rollouts = sub.store.read_thread(thread, full=True)
        except UnknownThread:
            return []
        return with_spool(rollouts, str(sub.store.layout.root), thread)

    def journaled(self, rows: Iterable[ThreadRow]) -> set[str]:
        """The agent threads among `rows` that have a hook journal (their baseline is exact)."""
        out: set[str] = set()
        for agent in {row.agent for row in rows if row.agent in _AGENT_NAMES}:
            if not os.path.isdir(journal_root(self.store.layout.root, agent)):
                continue
            sub = self.journal_keeper(agent)
            out |= {row.thread_id for row in rows if row.agent == agent
                    and sub.store.thread_row(row.thread_id) is not None}
        return out

    def read_journal(self, agent: str, agent_session_id: str) -> Replayed | None:
        """An agent session's journal folded on its own, or None when there is none."""
        from ..recovery.replay import replay

        rollouts = self.journal_rollouts(agent, agent_session_id)
        return replay(rollouts, agent=agent) if rollouts else None


def _open(sub: JournalKeeper, agent: str, thread: str,
          workspace: str | os.PathLike[str] | None) -> Session:
    """Attach to the journal's newest session, or create the journal (under its lock)."""
    newest = _newest(sub, thread)
    if newest is not None:
        return sub.attach(newest)
    lock = sub.store.lock_thread(thread, purpose="start its journal")
    try:
        if _newest(sub, thread) is not None:  # created by another process meanwhile
            lock.release()
            return _open(sub, agent, thread, workspace)
        if workspace is None:
            raise InvalidWorkspace(f"the journal of {agent} session {thread} does not exist yet: "
                                   "name the session's workspace to create it")
        session = sub.start(workspace, thread_id=thread, agent=agent, lock=lock,
                            reason=f"journal of {agent} session {thread}")
    except BaseException:
        if lock.is_locked:
            lock.release()
        raise
    return session


def _newest(sub: JournalKeeper, thread: str) -> str | None:
    """The newest session of a journal thread, or None when it has none."""
    try:
        return sub.store.thread_sessions(thread)[-1].session_id
    except UnknownThread:
        return None
