"""One agent session from two sources: the agent's own log (reconstructed) and our hook journal (exact).

Pure: both sides are already read. The journal — Session Keeper's own records, written by the
agents' hooks and keyed by the agent's session id — supplies what a log lacks or only
reconstructs: the git baseline with its exact SHA (its `session_meta` baseline and `baseline`
records), operations with their real status (Pre/PostToolUse), file versions with their hashes,
permissions, model, todos and verifier results as the hooks saw them.

Merging: the two record streams are merged by time, each keeping its own order; an operation's
(operation_id, status) delivered by both is folded once, and when the journal states an operation's
outcome the log's outcome for it is dropped (the hook saw it happen); every record is then
renumbered 1..N after the log's session_meta (seq 0), so the merged thread folds and assesses like
any other. Invariant: journal records that refer to the journal's own seqs (lifecycle, snapshots,
a rewind's bookkeeping) are never merged — only the kinds in MERGED_TYPES are, with seq references
dropped. `facts_of` says, per fact, which source the merged state took it from and how old it is.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..events import Record
from ..store.reader import Rollout
from .replay import Replayed, replay

JOURNAL = "journal"
LOG = "log"
MERGED_TYPES = frozenset({"baseline", "operation", "file_change", "permissions", "model", "todo",
                          "verifier"})
"""Journal record kinds the merged view takes (none of them refers to another record's seq)."""
FINAL = frozenset({"committed", "failed"})
_BASELINE_FIELDS = ("repo_root", "worktree", "identity", "branch", "head", "dirty")
_FACT = {"baseline": "git", "permissions": "permissions", "model": "model", "todo": "todos",
         "verifier": "verifier"}
"""Facts the latest record of a kind decides (operations and file history accumulate)."""
_ACCUMULATED = {"operation": "operations", "file_change": "file_history"}
HOOK_SOURCE = "sessionkeeper hook journal (exact)"


@dataclass(frozen=True)
class Merged:
    """The merged records (renumbered from 1) and, per record, which source it came from."""

    records: list[Record]
    origins: list[str]  # JOURNAL | LOG, one per record


def journal_records(metas: Iterable[Record | None], records: Iterable[Record]) -> list[Record]:
    """The journal's records the merged view takes: each session_meta's baseline as a `baseline`
    record, then the MERGED_TYPES records (copies, seq references dropped), in journal order."""
    out: list[Record] = []
    for meta in metas:
        baseline = (meta or {}).get("baseline")
        if isinstance(baseline, dict):
            out.append({"type": "baseline", "ts": (meta or {}).get("ts") or "",
                        **{k: baseline.get(k) for k in _BASELINE_FIELDS},
                        "data": {"source": "journal session_meta"}})
    for record in records:
        if record.get("type") in MERGED_TYPES:
            copy = dict(record)
            copy.pop("rewind_seq", None)
            out.append(copy)
    return out


def merge(log: Sequence[Record], journal: Sequence[Record]) -> Merged:
    """The log's records and the journal's (from `journal_records`) as one stream, renumbered."""
    decided = {r["operation_id"] for r in journal
               if r.get("type") == "operation" and r.get("status") in FINAL}
    tagged = heapq.merge(((r.get("ts") or "", 0, n, LOG, r) for n, r in enumerate(log)),
                         ((r.get("ts") or "", 1, n, JOURNAL, r) for n, r in enumerate(journal)))
    seen: set[tuple[str, str]] = set()
    new_of: dict[int, int] = {}
    records: list[Record] = []
    origins: list[str] = []
    for _ts, _side, _n, origin, record in tagged:
        kind = record.get("type")
        if kind == "operation":
            key = (str(record.get("operation_id")), str(record.get("status")))
            if key in seen or (origin == LOG and key[1] in FINAL and key[0] in decided):
                continue
            seen.add(key)
        copy = dict(record)
        if origin == LOG and isinstance(record.get("seq"), int):
            new_of[record["seq"]] = len(records) + 1
        copy["seq"] = len(records) + 1
        records.append(copy)
        origins.append(origin)
    for record, origin in zip(records, origins, strict=True):
        if origin == LOG and record.get("type") == "compacted" \
                and isinstance(record.get("through_seq"), int):
            record["through_seq"] = _mapped(record["through_seq"], new_of)
    return Merged(records, origins)


def _mapped(seq: int, new_of: dict[int, int]) -> int:
    """The new seq of an old log seq (a dropped record: the last kept one before it; 0: none)."""
    if seq in new_of:
        return new_of[seq]
    earlier = [old for old in new_of if old <= seq]
    return new_of[max(earlier)] if earlier else 0


def facts_of(merged: Merged, log_facts: dict[str, Any]) -> dict[str, Any]:
    """Per fact, where the merged state took it from and how old it is.

    A fact the latest record decides (git, permissions, model, todos, verifier) names the source
    of that record. Operations are exact when the journal saw every one of them; file history
    when the latest version of every file came from the journal. The log's facts are marked
    `exact: false` (reconstructed), the journal's `exact: true`.
    """
    facts: dict[str, Any] = {name: {**value, "origin": LOG, "exact": False}
                             for name, value in log_facts.items() if isinstance(value, dict)}
    latest: dict[str, tuple[str, str]] = {}
    keyed: dict[str, dict[str, str]] = {"operations": {}, "file_history": {}}  # key -> last origin
    seen_by_journal: dict[str, set[str]] = {"operations": set(), "file_history": set()}
    newest: dict[str, str] = {}
    for record, origin in zip(merged.records, merged.origins, strict=True):
        kind = str(record.get("type"))
        ts = record.get("ts") or ""
        if kind in _FACT:
            latest[_FACT[kind]] = (origin, ts)
        elif kind in _ACCUMULATED:
            name = _ACCUMULATED[kind]
            key = str(record.get("operation_id") if kind == "operation" else record.get("path"))
            keyed[name][key] = origin
            if origin == JOURNAL:
                seen_by_journal[name].add(key)
            newest[name] = max(newest.get(name, ""), ts)
    for name, (origin, ts) in latest.items():
        if origin == JOURNAL:
            facts[name] = {"source": HOOK_SOURCE, "as_of": ts, "origin": JOURNAL, "exact": True}
    for name, last in keyed.items():
        journal = seen_by_journal[name]
        if not journal:
            continue
        if name == "operations":  # exact when the hooks saw every operation
            missing = [key for key in last if key not in journal]
        else:  # exact when every file's latest version is the journal's
            missing = [key for key, origin in last.items() if origin != JOURNAL]
        facts[name] = {"source": HOOK_SOURCE + (", and the agent's log for what the hooks did not "
                                                "see" if missing else ""),
                       "as_of": newest.get(name) or None,
                       "origin": JOURNAL if not missing else f"{JOURNAL}+{LOG}",
                       "exact": not missing, "from_journal": len(journal),
                       "from_log_only": len(missing)}
    return facts


def replay_with_journal(log: Rollout, journal: Sequence[Rollout], *, agent: str) -> Replayed:
    """The agent's log folded with the journal merged in (the log alone when there is no journal).

    The meta's `data.facts` says where each fact came from (every fact of a log alone is
    `exact: false`); `data.journal` counts what the journal held (sessions, records merged,
    damaged lines, its newest record's time).
    """
    if log.meta is None:
        return replay([log], agent=agent)
    data = dict(log.meta.get("data") or {})
    found = data.get("facts")
    log_facts: dict[str, Any] = found if isinstance(found, dict) else {}
    readable = [r for r in journal if r.meta is not None]
    records = journal_records([r.meta for r in readable], [x for r in readable for x in r.records])
    merged = merge(log.records, records)
    data["facts"] = facts_of(merged, log_facts)
    if readable:
        data["journal"] = {"sessions": len(readable), "records": len(records),
                           "damaged_lines": [d.line for r in readable for d in r.damage],
                           "torn_tail": any(r.tail is not None for r in readable),
                           "as_of": max((x.get("ts") or "" for x in records), default="") or None}
    meta = {**log.meta, "data": data}
    return replay([dataclasses.replace(log, meta=meta, records=merged.records)], agent=agent)
