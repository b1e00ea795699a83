"""Where a drift_since starts: a seq the model gives, the current turn's start, or the session's.

`since_of` turns the tool's `since` argument into a `Since`: an integer (or its digits) is a seq
of the session, checked; `last_turn` is the seq of the last record stamped before the user's
latest prompt (Codex gives the turn's start in `_meta`, Claude Code's prompt hook notes it; with
neither, the session's start stands in, and says so); `session_start` is the seq before the
session's latest start, clear, compact or fork (else its meta's). Reads only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ToolInputInvalid
from . import shape, target
from .reading import check_seq

if TYPE_CHECKING:
    from ..recovery.replay import Replayed
    from .reading import Reader
    from .target import Target

SINCE = ("last_turn", "session_start")
_STARTS = frozenset({"startup", "resume", "clear", "compact", "fork"})


@dataclass(frozen=True)
class Since:
    """The seq compared from, and what it stands for."""

    seq: int
    what: str
    at: str | None = None


def since_of(reader: Reader, found: Target, now: Replayed, since: int | str,
             meta: Mapping[str, Any] | None) -> Since:
    """The seq a drift_since call compares from (ToolInputInvalid for a bad `since`)."""
    if isinstance(since, str) and since.strip().isdigit():
        since = int(since.strip())
    if isinstance(since, int) and not isinstance(since, bool):
        check_seq(now, since)
        return Since(since, f"seq {since}")
    if since == "session_start":
        return _session_start(reader, found, now)
    if since != "last_turn":
        raise ToolInputInvalid(f"since {shape.flat(since, 60)!r}: give a seq (an integer) or "
                               f"one of {', '.join(SINCE)}")
    at = _turn_started(reader, found, meta)
    if at is None:
        start = _session_start(reader, found, now)
        return Since(start.seq, start.what + " (no start of the current turn is recorded: "
                                             "the prompt hook did not run)", start.at)
    return Since(_seq_before(reader, found, now, at),
                 "the start of the current turn (the user's latest prompt)", at)


def _turn_started(reader: Reader, found: Target, meta: Mapping[str, Any] | None) -> str | None:
    """When the current turn began: Codex says it in `_meta`, Claude's prompt hook noted it."""
    codex = (meta or {}).get(target.CODEX_TURN_META)
    if isinstance(codex, Mapping) and isinstance(codex.get("turn_started_at_unix_ms"), int):
        return _iso(codex["turn_started_at_unix_ms"])
    if not found.journal:
        return None
    from ..hooks.state import turn_of

    return turn_of(reader.keeper.store.layout.root, found.agent, found.thread_id)


def _session_start(reader: Reader, found: Target, now: Replayed) -> Since:
    meta_seq = int(now.meta.get("seq", 0))
    latest = None
    for record in reader.records_after(found, now, meta_seq):
        if record.get("type") == "lifecycle" and record.get("source") in _STARTS:
            latest = record
    if latest is not None:
        return Since(max(int(latest["seq"]) - 1, 0),
                     f"the session's latest {latest['source']}", latest.get("ts"))
    return Since(meta_seq, "the start of the session's latest run", now.meta.get("ts"))


def _iso(unix_ms: int) -> str:
    """A Unix time in milliseconds as the store's timestamps are written (UTC, ms, Z)."""
    seconds, millis = divmod(int(unix_ms), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _seq_before(reader: Reader, found: Target, now: Replayed, at: str) -> int:
    """The seq of the session's last record stamped before `at` (its first seq when none is)."""
    rollouts = now.rollouts
    first = rollouts[0] if rollouts else None
    if first is not None and first.from_snapshot and not (
            first.records and str(first.records[0].get("ts") or "") < at):
        rollouts = reader.full(found, now).rollouts  # `at` lies before the snapshot read
    before = [int(r["seq"]) for rollout in rollouts
              for r in ([rollout.meta] if rollout.meta else []) + rollout.records
              if str(r.get("ts") or "") < at]
    if before:
        return max(before)
    return int(rollouts[0].meta["seq"]) if rollouts and rollouts[0].meta else 0
