"""Fold a thread's rollouts (newest snapshot + tail) into a SessionState — log → state, one way."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..events import Record
from ..store.reader import Damage, Rollout, Status
from .state import SessionState

if TYPE_CHECKING:
    from ..store.log import LogReader


@dataclass
class Replayed:
    """A thread rebuilt from its rollouts, with everything that was wrong on the way."""

    rollouts: list[Rollout]
    state: SessionState
    meta: dict[str, Any]  # the newest session's session_meta
    damaged: list[dict[str, Any]] = field(default_factory=list)
    unreadable: list[dict[str, Any]] = field(default_factory=list)  # empty / no meta / future
    redelivered: list[dict[str, Any]] = field(default_factory=list)  # duplicate lines in the log
    agent: str = "native"  # which agent wrote the log (native: Session Keeper itself)

    @property
    def facts(self) -> dict[str, Any]:
        """Where the newest session's facts came from and how old they are (agents' own logs)."""
        data = self.meta.get("data")
        facts = data.get("facts") if isinstance(data, dict) else None
        return dict(facts) if isinstance(facts, dict) else {}

    @property
    def latest(self) -> Rollout:
        """The newest session's rollout."""
        return self.rollouts[-1]

    @property
    def restored_to_seq(self) -> int:
        """The last seq folded from the newest readable session."""
        return self.latest.last_seq


def _damage_entries(rollout: Rollout, damage: list[Damage]) -> list[dict[str, Any]]:
    sid = (rollout.meta or {}).get("session_id")
    return [{"session_id": sid, "line": d.line, "kind": d.kind, "reason": d.detail}
            for d in damage]


def replay(rollouts: list[Rollout], *, agent: str = "native",
           log: LogReader | None = None) -> Replayed:
    """Fold rollouts oldest to newest; a rollout read from a snapshot restores it first.

    The state reads back what it refers to by seq through `log` (the store's Keeper gives the
    thread's log on disk), else through the records read here — attached before folding, as a
    record may name what only the log holds (an archived operation).
    """
    state = SessionState()
    usable: list[Rollout] = []
    out = Replayed(rollouts=usable, state=state, meta={}, agent=agent)
    state.attach_log(log or _in_memory(usable))
    for rollout in rollouts:
        if rollout.meta is None or rollout.status in (Status.EMPTY, Status.NO_META,
                                                      Status.FUTURE_SCHEMA):
            out.unreadable.append({"path": str(rollout.path), "status": rollout.status.value,
                                   "schema_version": rollout.schema_version})
            continue
        usable.append(rollout)
        out.damaged += _damage_entries(rollout, rollout.damage)
        out.redelivered += [{"session_id": rollout.meta["session_id"], **d}
                            for d in rollout.duplicates]
        state.apply(rollout.meta)
        state.fold(rollout.records)
        out.meta = rollout.meta
    return out


def _in_memory(rollouts: list[Rollout]) -> Callable[[int, int, frozenset[str] | None],
                                                    Iterator[Record]]:
    """A log over the records read so far (enough for a full read, e.g. an agent's own file);
    asked for records before a snapshot it started from, it raises LookupError (on disk)."""

    def read(after: int, through: int, types: frozenset[str] | None) -> Iterator[Record]:
        start = next((r for r in rollouts if r.from_snapshot), None)
        covered = start.records[0]["seq"] if start is not None and start.records else None
        if covered is not None and after < covered - 1:
            raise LookupError(f"records after seq {after} lie before the snapshot read "
                              f"(seq {covered}): read them through the store")
        for rollout in rollouts:
            for record in rollout.records:
                seq = record.get("seq")
                if isinstance(seq, int) and after < seq <= through and (
                        types is None or record.get("type") in types):
                    yield record

    return read
