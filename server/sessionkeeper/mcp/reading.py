"""One session read for the tools, through the Keeper: its state now, its records, its state at a seq.

Every read goes through the Keeper of the session (`Keeper.journal_keeper(agent)` for a hook
journal, the store's Keeper for a native thread) and its `replay`: the newest snapshot and the tail
after it — so whatever that replay folds (a journal's spooled hook records too) is seen. A full
read (every record) is needed only for what lies before that snapshot; it is kept while the
replay ends at the same seq in the same files, so asking again in the same turn costs only the
replay. The state at a seq is the replay of the records up to it (`cut`), folded by the same
subsystems; the workspace is captured afresh for every call (`workspace`).
"""

from __future__ import annotations

import dataclasses
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
        self._full: tuple[tuple[Any, ...], Replayed] | None = None

    def keeper_of(self, target: Target) -> Keeper:
        """The Keeper holding the session: its agent's journal store, or the store itself."""
        return self.keeper.journal_keeper(target.agent) if target.journal else self.keeper

    def replayed(self, target: Target) -> Replayed:
        """The session's state now: its newest snapshot and the tail after it, folded."""
        return self.keeper_of(target).replay(target.thread_id)

    def full(self, target: Target, now: Replayed) -> Replayed:
        """The session with every record read (kept while `now` ends at the same seq)."""
        key = (target.agent, target.thread_id, now.restored_to_seq,
               tuple((str(r.path), r.size) for r in now.rollouts))
        if self._full is None or self._full[0] != key:
            self._full = (key, self.keeper_of(target).replay(target.thread_id, full=True))
        return self._full[1]

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
        rollouts = self.rollouts_from(target, now, seq)
        cut = [cut_at(r, seq) for r in rollouts if r.meta is not None and int(r.meta["seq"]) <= seq]
        return replay(cut, agent=now.agent)

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


def first_seq(now: Replayed) -> int:
    """The seq of the session's first record (its first session_meta)."""
    return int(now.rollouts[0].meta["seq"]) if now.rollouts and now.rollouts[0].meta else 0


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
