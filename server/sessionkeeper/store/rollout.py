"""A rollout's bytes parsed, tolerantly and honestly: every valid record, and exactly what was wrong.

- A torn or unparsable *last* line (NUL-filled tails included) is reported as the `tail`; the
  complete prefix is used. Cutting it off and keeping it aside is `quarantine.quarantine_tail`.
- Damage in the middle is never skipped silently: each bad line is a `Damage` with its line number.
- Duplicate deliveries of a seq are dropped and reported; gaps and reordering are damage, after a
  snapshot as much as from the meta on.
- A line is a record only if it passes codec's rules: its checksum, a seq in range, no integer
  beyond 64 bits, a well-typed meta, a restorable snapshot. Checksum-less (schema-1) lines are
  read only in a file whose meta says schema 1 — in a checksummed file such a line is damage.
- A 0-byte file, a missing or unusable `session_meta`, a future schema version are each a
  distinct status.
- While a file is clean, runs of lines are decoded together (`codec.decode_run`, the same
  rules batched); a run with anything to report is read again line by line, so what is
  reported never depends on the batching.

Bad lines are values (`Damage`, `Tail`, `Status`), never exceptions. Reading the files is
`reader`'s (which re-exports these names).
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from ..events import RECORD_TYPES, SCHEMA_VERSION, upcast
from .codec import (
    MAX_SEQ,
    big_int_problem,
    decode,
    decode_run,
    loads_legacy,
    may_hold_big_int,
    meta_problem,
    parse_legacy,
    refusal,
    schema_version,
    seq_problem,
    snapshot_problem,
)

Record = dict[str, Any]
# record type -> whether its fields can hold numbers or free-form values (walked for integers
# beyond 64 bits); the other types hold strings only, so a number there is never read
_NUMERIC = {"session_meta", "operation", "cost", "verifier", "compacted", "snapshot", "model"}
_WALK = {kind: kind in _NUMERIC for kind in RECORD_TYPES}
# the types a run of clean lines may hold (codec.decode_run); a snapshot or a second meta has
# rules of its own and sends its run line by line
_PLAIN = frozenset(kind for kind, walk in _WALK.items() if not walk)
_WALKED = frozenset(kind for kind, walk in _WALK.items() if walk) - {"snapshot", "session_meta"}
_RUN = 1024  # lines decoded together while the file is clean


class Status(str, Enum):
    """What state a rollout is in, as a whole."""

    OK = "ok"
    DAMAGED = "damaged"  # damage in the middle: usable prefix, but not to be continued silently
    EMPTY = "empty"  # 0 bytes
    NO_META = "no_meta"  # first line is not a usable session_meta
    FUTURE_SCHEMA = "future_schema"  # written by a newer Session Keeper


@dataclass(frozen=True)
class Damage:
    """A bad line in the middle of a rollout."""

    line: int
    kind: str  # unparsable, checksum, seq_gap, seq_order, seq_range, int_range, unknown_type,
    #            invalid_record, no_meta, invalid_meta
    detail: str


@dataclass(frozen=True)
class Tail:
    """The torn last line: where it starts, how long it is, and why it is unusable."""

    line: int
    offset: int
    length: int
    reason: str


@dataclass
class Rollout:
    """A rollout as read: meta, records after it, and every problem found."""

    path: Path | None
    status: Status
    meta: Record | None = None
    records: list[Record] = field(default_factory=list)
    damage: list[Damage] = field(default_factory=list)
    duplicates: list[dict[str, Any]] = field(default_factory=list)  # re-delivered: line, seq, type, op id
    tail: Tail | None = None
    size: int = 0
    schema_version: int | None = None
    from_snapshot: bool = False  # records start at the latest snapshot, not at seq 1

    @property
    def last_seq(self) -> int:
        """The seq of the last good record (the meta's when there is nothing else; -1 without meta)."""
        if self.records:
            return self.records[-1]["seq"]
        return self.meta.get("seq", 0) if self.meta else -1

    @property
    def good_size(self) -> int:
        """Bytes of the complete prefix (the file size without a torn tail)."""
        return self.tail.offset if self.tail else self.size


def parse_rollout(data: bytes, *, path: Path | None = None, window: bool = False) -> Rollout:
    """Parse the bytes of a rollout (`window`: meta line + a later stretch starting at a snapshot)."""
    if not data:
        return Rollout(path, Status.EMPTY)
    lines = data.split(b"\n")
    complete = lines[:-1]
    partial = lines[-1]
    gc_was_enabled = gc.isenabled()
    gc.disable()  # keeping 100k dicts alive triggers needless cyclic collections
    try:
        rollout = _parse_lines(complete, partial, size=len(data), path=path, window=window)
    finally:
        if gc_was_enabled:
            gc.enable()
    rollout.from_snapshot = window
    return rollout


def _read_meta(line: bytes) -> tuple[Record | None, bool, str]:
    """(meta or the first record, whether the file is legacy as a whole, why it is unusable)."""
    record = decode(line)
    if record is not None:
        return record, False, ""
    record = parse_legacy(line)
    if record is not None:
        return record, True, ""
    return None, False, refusal(line, legacy=False)


def _parse_lines(lines: list[bytes], partial: bytes, *, size: int, path: Path | None,
                 window: bool) -> Rollout:
    rollout = Rollout(path, Status.OK, size=size)
    offsets_end = size - len(partial)
    if partial:
        torn = "NUL bytes" if not partial.strip(b"\x00") else "torn: no newline"
        rollout.tail = Tail(len(lines) + 1, offsets_end, len(partial), torn)
    if not lines:
        rollout.status = Status.EMPTY
        return rollout
    meta, legacy, unusable = _read_meta(lines[0])
    if not partial:  # a complete but unusable last line is a torn tail too
        last = lines[-1]
        usable = meta is not None if len(lines) == 1 else (
            decode(last) is not None or (legacy and loads_legacy(last) is not None))
        if not usable:
            lines.pop()
            rollout.tail = Tail(len(lines) + 1, offsets_end - len(last) - 1, len(last) + 1,
                                refusal(last, legacy=legacy))
    if not lines:
        rollout.status = Status.EMPTY
        return rollout
    if meta is None or meta.get("type") != "session_meta":
        rollout.status = Status.NO_META
        kind = "no_meta" if meta is not None else _kind(unusable)
        detail = unusable or f"first record is {(meta or {}).get('type')!r}"
        rollout.damage.append(Damage(1, kind, detail))
        _fold_records(rollout, lines, 1 if meta is None else 0, window=window, legacy=False)
        return rollout
    version = 1 if legacy else schema_version(meta)  # a legacy meta comes upcast already
    rollout.schema_version = version
    if version is not None and version > SCHEMA_VERSION:
        rollout.status = Status.FUTURE_SCHEMA
        rollout.meta = meta
        return rollout
    if not legacy and version is not None and version < SCHEMA_VERSION:
        meta = upcast(meta, version)
    problem = ("schema_version is not an integer" if version is None or version < 1
               else meta_problem(meta) or _big_int(meta, lines[0]))
    if problem:
        rollout.status = Status.NO_META
        rollout.damage.append(Damage(1, "invalid_meta", problem))
    else:
        rollout.meta = meta
    _fold_records(rollout, lines, 1, window=window, legacy=legacy)
    return rollout


def _big_int(record: Record, line: bytes) -> str | None:
    return big_int_problem(line) if may_hold_big_int(record) else None


def _refused(record: Record, line: bytes, walk: bool | None) -> tuple[str, str] | None:
    """(damage kind, why) for a decoded record that breaks codec's rules, or None."""
    why = seq_problem(record.get("seq"))
    if why:
        return "seq_range", why
    if walk or "data" in record:
        why = _big_int(record, line)
        if why:
            return "int_range", why
    if record.get("type") == "snapshot":
        why = snapshot_problem(record)
        if why:
            return "invalid_record", why
    if record.get("type") == "session_meta":
        return "invalid_record", "a session_meta after the first line"
    return None


def _fold_records(rollout: Rollout, lines: list[bytes], first_index: int, *, window: bool,
                  legacy: bool) -> None:
    """Fold lines into records; every line refused is a Damage, every re-delivery a duplicate.

    Seq order is checked from the meta on, or in a window from the snapshot that starts it (which
    must come after the meta).
    """
    records = rollout.records
    append = records.append
    damage = rollout.damage.append
    floor: int = rollout.meta.get("seq", 0) if rollout.meta is not None else -1
    expected: int | None = floor + 1 if rollout.meta is not None and not window else None
    skipped = 0  # damaged lines since the last good record: they explain a jump in seq
    walks, top, unframe = _WALK, MAX_SEQ, decode  # locals: this loop runs for every line
    start, end = first_index, len(lines)
    while start < end:
        stop = min(start + _RUN, end)
        if expected is not None and not skipped and not legacy:  # a clean stretch so far
            run = decode_run(lines[start:stop], first_seq=expected, plain=_PLAIN, walked=_WALKED)
            if run is not None:
                records += run
                expected += stop - start
                start = stop
                continue
        for number, line in enumerate(lines[start:stop], start=start + 1):
            record = unframe(line)
            if record is None:
                record = loads_legacy(line) if legacy else None
                if record is None:
                    why = refusal(line, legacy=legacy)
                    damage(Damage(number, _kind(why), why))
                    skipped += 1
                    continue
                record = upcast(record, 1)
            seq: Any = record.get("seq")  # checked just below, before any arithmetic
            kind = record.get("type")
            walk = walks.get(kind) if kind.__class__ is str else None
            if (seq.__class__ is not int or not 0 <= seq <= top or walk or "data" in record
                    or expected is None):  # the common message line takes none of these
                refused = _refused(record, line, walk)
                if refused is None and expected is None and seq <= floor:
                    refused = "seq_order", f"seq {seq} is not after the meta's seq {floor}"
                if refused is not None:
                    damage(Damage(number, *refused))
                    skipped += 1
                    continue
            if expected is not None and seq != expected and seq != expected + skipped:
                if records and seq <= records[-1]["seq"]:
                    rollout.duplicates.append({"line": number, "seq": seq, "type": kind,
                                               "operation_id": record.get("operation_id")})
                    if seq != records[-1]["seq"] or _differs(records, seq, record):
                        damage(Damage(number, "seq_order", f"seq {seq} after {expected - 1}"))
                    continue
                damage(Damage(number, "seq_gap", f"expected seq {expected}, found {seq}"))
            expected = seq + 1
            skipped = 0
            if walk is None:
                damage(Damage(number, "unknown_type", f"unknown type {kind!r}"))
                continue
            append(record)
        start = stop
    if rollout.damage and rollout.status is Status.OK:
        rollout.status = Status.DAMAGED


def _differs(records: list[Record], seq: int, record: Record) -> bool:
    previous = records[-1]
    return {k: v for k, v in previous.items() if k != "ts"} != {
        k: v for k, v in record.items() if k != "ts"
    }


def _kind(reason: str) -> str:
    return "checksum" if "checksum" in reason else "unparsable"
