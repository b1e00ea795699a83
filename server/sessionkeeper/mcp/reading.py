"""One session read for the tools, through the Keeper: its state now, its records, its state at a seq.

Every read goes through the Keeper of the session (`Keeper.journal_keeper(agent)` for a hook
journal, the store's Keeper for a native thread) and its `replay`: the newest snapshot and the tail
after it — so whatever that replay folds (a journal's spooled hook records too) is seen. A full
read (every record) is needed only for what lies before that snapshot. The state at a seq is the
replay of the records up to it (`cut_at`), folded by the same subsystems; the workspace is
captured afresh for every call (`workspace`).

Kept between calls (a model asks several times in a turn): the state at a seq, for good (the
records up to it never change: a journal only grows), and the replay and the full read while
`files_key` is unchanged — the stat (size, mtime, inode) of every file in
the folders of the session's rollouts (as the index names them) and of every file the session's
store holds outside its rollout, blob and lock folders (its index and its WAL, anything a writer
keeps beside the rollouts). The key is taken before the replay: a write during it makes the next
call read again. Invariant: a kept read is only ever returned under the key it was read under.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ToolInputInvalid

if TYPE_CHECKING:
    from ..api import Keeper
    from ..events import Record
    from ..recovery.findings import Workspace
    from ..recovery.replay import Replayed
    from ..store.reader import Rollout
    from .target import Target


class Reader:
    """Reads of the sessions one server answers about (a read-only Keeper; one full read kept)."""

    def __init__(self, keeper: Keeper) -> None:
        self.keeper = keeper
        self._kept: dict[Any, Replayed] = {}  # (files key, what) -> a read under that key
        self._key: tuple[Any, ...] | None = None
        self._at: dict[Any, Replayed] = {}  # (session, seq, its rollouts) -> the state at seq

    def keeper_of(self, target: Target) -> Keeper:
        """The Keeper holding the session: its agent's journal store, or the store itself."""
        return self.keeper.journal_keeper(target.agent) if target.journal else self.keeper

    def replayed(self, target: Target) -> Replayed:
        """The session's state now: its newest snapshot and the tail after it, folded (the read
        kept from an earlier call while the session's files are unchanged)."""
        self._key = files_key(self.keeper_of(target), target)
        return self._read(target, "now", lambda: self.keeper_of(target).replay(target.thread_id))

    def _read(self, target: Target, what: object, read: Callable[[], Replayed]) -> Replayed:
        if self._key is None:
            return read()
        key = (self._key, what)
        if key not in self._kept:
            self._kept = {k: v for k, v in self._kept.items() if k[0] == self._key}
            self._kept[key] = read()
        return self._kept[key]

    def full(self, target: Target, now: Replayed) -> Replayed:
        """The session with every record read."""
        return self._read(target, "full", lambda: self.keeper_of(target).replay(
            target.thread_id, full=True))

    def rollouts_from(self, target: Target, now: Replayed, seq: int) -> list[Rollout]:
        """Rollouts holding every record after `seq` (and what folds them: a snapshot at or
        before it), the cheap read's when it reaches back that far."""
        first = now.rollouts[0] if now.rollouts else None
        if first is not None and (not first.from_snapshot
                                  or (first.records and first.records[0]["seq"] <= seq)):
            return now.rollouts
        return self.full(target, now).rollouts

    def records_after(self, target: Target, now: Replayed, seq: int) -> list[Record]:
        """Every record after `seq`, in order (snapshots left out)."""
        return [r for rollout in self.rollouts_from(target, now, seq) for r in rollout.records
                if r["seq"] > seq and r.get("type") != "snapshot"]

    def record_at(self, target: Target, now: Replayed, seq: int) -> Record | None:
        """The record of `seq` (None when there is none)."""
        for rollout in self.rollouts_from(target, now, seq - 1):
            for record in rollout.records:
                if record["seq"] == seq:
                    return record
        return None

    def state_at(self, target: Target, now: Replayed, seq: int) -> Replayed:
        """The session as it stood at `seq`: its records up to it, folded by the subsystems."""
        from ..recovery.replay import replay

        check_seq(now, seq)
        sessions = tuple(str(r.path) for r in now.rollouts if r.meta and int(r.meta["seq"]) <= seq)
        key = (target.agent, target.thread_id, seq, sessions)
        if key not in self._at:  # records up to `seq` never change: the journal only grows
            rollouts = self.rollouts_from(target, now, seq)
            self._at[key] = replay([cut_at(r, seq) for r in rollouts if r.meta is not None
                                    and int(r.meta["seq"]) <= seq], agent=now.agent)
            while len(self._at) > _AT_KEPT:
                self._at.pop(next(iter(self._at)))
        return self._at[key]

    def files_workspace(self, now: Replayed) -> Workspace:
        """The session's workspace for comparing files only (no git look-up)."""
        from ..recovery.baseline import file_hash
        from ..recovery.findings import Workspace

        cwd = os.path.abspath(str(now.meta.get("cwd") or "."))
        exists = os.path.isdir(cwd)
        return Workspace(root=cwd, exists=exists, baseline=None, requested={},
                         file_hash=lambda rel: file_hash(cwd, rel) if exists else None)

    def workspace(self, now: Replayed) -> Workspace:
        """The session's workspace as it is now (git and files), to compare states with."""
        from ..recovery.baseline import current_workspace
        from ..recovery.subsystems.worktree import Worktree

        worktree = now.state.get(Worktree)
        try:
            recorded = worktree.recorded()
        except ValueError:
            recorded = None
        cwd = str(now.meta.get("cwd") or worktree.state.get("cwd") or ".")
        return current_workspace(cwd, recorded=recorded, recorded_cwd=worktree.state.get("cwd"))


_AT_KEPT = 8
_NOT_KEYED = frozenset({"sessions", "archived_sessions", "blobs", "locks"})


def files_key(keeper: Keeper, target: Target) -> tuple[Any, ...] | None:
    """The stat of every file a replay of the session depends on (None: cannot tell, read anew)."""
    from ..errors import SessionKeeperError

    root = str(keeper.store.layout.root)
    try:
        rows = keeper.thread_sessions(target.thread_id)
    except (SessionKeeperError, OSError):
        return None
    folders = {os.path.dirname(os.path.join(root, row.path)) for row in rows}
    beside = [os.path.join(root, name) for name in _names(root) if name not in _NOT_KEYED]
    stats: list[tuple[Any, ...]] = [(row.session_id, row.path) for row in rows]
    for place in sorted(folders) + sorted(beside):
        stats += _stats(place, depth=2)
    return tuple(stats)


def _names(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _stats(path: str, *, depth: int) -> list[tuple[Any, ...]]:
    """(path, size, mtime_ns, inode) of `path`, or of the files under it (to `depth` folders);
    SQLite's -shm files aside (every reader of a WAL database updates them)."""
    try:
        info = os.stat(path)
    except OSError:
        return [(path, None)]
    if not os.path.isdir(path):
        return [] if path.endswith("-shm") else [(path, info.st_size, info.st_mtime_ns, info.st_ino)]
    if depth == 0:
        return [(path, info.st_mtime_ns)]
    return [s for name in _names(path) for s in _stats(os.path.join(path, name), depth=depth - 1)]


def check_seq(now: Replayed, seq: int) -> None:
    """ToolInputInvalid unless `seq` is one of the session's seqs."""
    last = now.restored_to_seq
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise ToolInputInvalid(f"seq {seq!r} is not a record number (an integer from 0)")
    if seq > last:
        raise ToolInputInvalid(f"seq {seq} is beyond the session's last record (seq {last})")


def cut_at(rollout: Rollout, seq: int) -> Rollout:
    """A copy of a rollout holding only its records up to `seq`."""
    return dataclasses.replace(rollout, records=[r for r in rollout.records if r["seq"] <= seq])
