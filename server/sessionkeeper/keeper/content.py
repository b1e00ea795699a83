"""The Keeper's content actions: diffs, blobs of a thread, rewind (and undo), trailers, gc.

A rewind runs under the thread's writer lock — the live session of this Keeper, or the thread's
newest session attached for the purpose — and that session's record lock; what it records and in
which order is `rewinding`'s. Reads (diff, blob, dry runs) replay the thread and take no lock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import ids
from ..errors import InvalidEvent, UnknownVersion

if TYPE_CHECKING:  # imported where first needed: building a Keeper loads none of the content actions
    from ..recovery.diff import FileDiff
    from ..recovery.state import SessionState
    from ..session.live import Session
    from ..store.blobs import BlobStore, GcReport
    from .catalog import Catalog
    from .ground import Ground
    from .rewinding import RewindReport
    from .sessions import Sessions

__all__ = ["Content"]


class Content:
    """The content store's actions on a thread: diffs, blobs, rewinds, trailers, gc."""

    def __init__(self, ground: Ground, catalog: Catalog, sessions: Sessions) -> None:
        """`catalog` replays a thread, `sessions` attaches to one to rewind it."""
        self.ground = ground
        self.catalog = catalog
        self.sessions = sessions

    @property
    def blobs(self) -> BlobStore:
        """The store's blobs."""
        return self.ground.store.blobs

    # ---- reading -----------------------------------------------------------------------------

    def diff(self, thread_id: str, *, from_seq: int | None = None, to_seq: int | None = None,
             path: str | None = None, squash: bool = False) -> list[FileDiff]:
        """Unified diffs of a thread's file versions after `from_seq` up to `to_seq`, with authors."""
        from ..recovery.diff import diff_history
        from .rewinding import history_of

        history = history_of(self.catalog.replay(ids.thread_id(thread_id)).state)
        return diff_history(history.files, blobs=self.blobs, from_seq=from_seq, to_seq=to_seq,
                            path=path, squash=squash)

    def blob(self, thread_id: str, key: str) -> bytes:
        """The content of a file version the thread's history names (BlobMissing / BlobCorrupt)."""
        from ..errors import BlobMissing
        from ..store.blobs import check_key
        from .rewinding import history_of

        history = history_of(self.catalog.replay(ids.thread_id(thread_id)).state)
        if check_key(key) not in history.hashes():
            raise UnknownVersion(f"thread {thread_id} names no file version {key[:16]}…")
        reason = history.not_kept(key)
        if reason is not None:
            raise BlobMissing(key, f"its content was never kept ({reason})")
        return self.blobs.get(key)

    # ---- rewind ---------------------------------------------------------------------------------

    def rewind(self, thread_id: str, *, to_seq: int | None = None,
               paths: Sequence[str] | None = None, dry_run: bool = False, force: bool = False,
               undo: bool = False) -> RewindReport:
        """Restore a thread's files to their versions at `to_seq` (or undo the latest rewind)."""
        from . import rewinding

        thread = ids.thread_id(thread_id)
        if undo == (to_seq is not None):
            raise InvalidEvent("rewind: give either to_seq or undo")
        if to_seq is not None and to_seq < 0:
            raise InvalidEvent(f"to_seq: {to_seq} is negative")
        if dry_run:
            replayed = self.catalog.replay(thread)
            return self._rewind(None, replayed.state, workspace=str(replayed.meta["cwd"]),
                                to_seq=to_seq, paths=paths, force=force, undo=undo)
        with self._writable(thread) as session, session.exclusive():
            finished = rewinding.finish_interrupted(
                session, blobs=self.blobs, allow_secret_files=self.ground.allow_secret_files)
            report = self._rewind(session, session.state, workspace=session.workspace,
                                  to_seq=to_seq, paths=paths, force=force, undo=undo)
        return dataclasses.replace(report, finished=finished)

    @contextlib.contextmanager
    def _writable(self, thread: str) -> Iterator[Session]:
        """The thread's live session here, else its newest session attached (the writer lock)."""
        session = self.ground.live.get(thread)
        if session is not None:
            yield session
            return
        rows = self.ground.store.thread_sessions(thread)
        session = self.sessions.attach(rows[-1].session_id)
        try:
            yield session
        finally:
            session.close()

    def _rewind(self, session: Session | None, state: SessionState, *, workspace: str,
                to_seq: int | None, paths: Sequence[str] | None, force: bool,
                undo: bool) -> RewindReport:
        """Plan from `state`; carry the plan out when a writable session is given (else: dry run)."""
        from . import rewinding
        from .rewinding import RewindReport

        undo_of = guard_after = None
        if undo:
            to_seq, paths, undo_of, guard_after = rewinding.undo_target(state)
        assert to_seq is not None
        planned = rewinding.plan(state, workspace=workspace, to_seq=to_seq, paths=paths,
                                 force=force, blobs=self.blobs,
                                 allow_secret_files=self.ground.allow_secret_files,
                                 guard_after=guard_after)
        if session is None:
            return RewindReport(planned, None, None, undo_of, None,
                                rewinding.undo_available(state))
        begin, result = rewinding.carry_out(session, planned, blobs=self.blobs, undo_of=undo_of,
                                            paths=paths)
        return RewindReport(planned, result, begin, undo_of, None, rewinding.undo_available(state))

    # ---- trailers ------------------------------------------------------------------------------

    def trailers(self, thread_id: str, *, coauthor: str | None = None) -> tuple[str, str]:
        """The commit trailers of a thread: `Co-authored-by:` (its agent) and `Agent-Session:`."""
        from ..recovery.trailers import commit_trailers

        thread = ids.thread_id(thread_id)
        replayed = self.catalog.replay(thread)
        return commit_trailers(coauthor=_coauthor(coauthor, replayed.agent), thread_id=thread)

    def trail_commit(self, message_file: str, *, workspace: str, thread_id: str | None = None,
                     coauthor: str | None = None) -> tuple[str, ...]:
        """Add the trailers to a commit message if the staged change holds the thread's agent lines.

        The thread defaults to the latest one of `workspace`; returns the agent-authored paths.
        """
        from ..recovery import trailers
        from .rewinding import history_of

        if thread_id is None:
            rows = self.catalog.rows(workspace=workspace, limit=1)
            if not rows:
                return ()
            thread_id = rows[0].thread_id
        replayed = self.catalog.replay(ids.thread_id(thread_id))
        return trailers.trail_commit(message_file, workspace=workspace,
                                     history=history_of(replayed.state).files, read=self.blobs.get,
                                     coauthor=_coauthor(coauthor, replayed.agent),
                                     thread_id=thread_id)

    # ---- retention ------------------------------------------------------------------------------

    def blob_references(self) -> tuple[set[str], set[str]]:
        """(every blob a rollout names as stored, archived ones included; what live threads need:
        the file versions a rewind needs, the values and writes of the newest checkpoints)."""
        from ..events import blob_refs
        from ..recovery.replay import replay
        from ..recovery.subsystems.checkpoints import Checkpoints
        from ..store.locks import rollout_moves_lock
        from ..store.reader import read_rollout
        from .rewinding import history_of

        referenced: set[str] = set()
        threads: dict[str, list[Any]] = {}
        live: set[str] = set()
        protect: set[str] = set()
        with rollout_moves_lock(self.ground.store.layout, shared=False):  # no rollout between places
            found = [(read_rollout(Path(path)), archived)
                     for path, archived in self.ground.store.layout.scan_rollouts()]
        for rollout, archived in found:
            for record in rollout.records:
                referenced.update(blob_refs(record))
            if rollout.meta is not None:
                threads.setdefault(str(rollout.meta["thread_id"]), []).append(rollout)
                if not archived:
                    live.add(str(rollout.meta["thread_id"]))
        for thread, rollouts in threads.items():
            rollouts.sort(key=lambda r: int(r.meta["seq"]) if r.meta else 0)
            state = replay(rollouts).state
            history = history_of(state)
            referenced |= history.hashes()  # a fork's snapshot names versions none of its records do
            if thread in live:
                protect |= history.needed() | state.get(Checkpoints).needed()
        return referenced, protect

    def gc(self, *, cap_bytes: int | None = None, dry_run: bool = False,
           min_age_s: float = 3600.0) -> GcReport:
        """Remove blobs no rollout names; over the cap, the least recently used unprotected ones."""
        self.ground.live.flush()  # buffered records name blobs too
        referenced, protect = self.blob_references()
        cap = cap_bytes if cap_bytes is not None else self.ground.blob_cap_bytes
        return self.blobs.gc(referenced, cap_bytes=cap, protect=protect, min_age_s=min_age_s,
                             dry_run=dry_run)


def _coauthor(given: str | None, agent: str) -> Any:
    """The identity to credit: given as `Name <email>`, else $SESSIONKEEPER_COAUTHOR, else the agent's."""
    from ..recovery.trailers import KNOWN_AGENTS, Coauthor

    text = given or os.environ.get("SESSIONKEEPER_COAUTHOR")
    if text:
        name, _, rest = text.partition("<")
        if not rest.endswith(">") or not name.strip():
            raise InvalidEvent(f"coauthor: expected 'Name <email>', not {text!r}")
        return Coauthor(name.strip(), rest[:-1].strip())
    return KNOWN_AGENTS.get(agent) or Coauthor("AI agent", "agent@sessionkeeper.invalid")
