"""The whole restorable state of a session: every registered subsystem, in dependency order.

Invariants: records are routed only to the subsystems whose `handles` holds their type; a record
whose seq is not above the state's `through_seq` was already folded and is skipped (counted in
`skipped`); a subsystem that raises while folding or validating is isolated — it stops receiving
records, is left out of snapshots, and is reported as an Invalidation — and never crashes the rest.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from ..events import Record
from .findings import Difference, Invalidation, SubsystemReport, Workspace
from .subsystems import load_all
from .subsystems.base import Subsystem

S = TypeVar("S", bound=Subsystem)


def dependency_order(registry: Mapping[str, type[Subsystem]]) -> list[str]:
    """Return names so each comes after its depends_on (ties by name); raise on a cycle."""
    for name, cls in registry.items():
        missing = [d for d in cls.depends_on if d not in registry]
        if missing:
            raise ValueError(f"subsystem {name!r} depends on unknown {missing}")
    order: list[str] = []
    pending = dict(sorted(registry.items()))
    while pending:
        ready = [n for n, cls in pending.items() if all(d in order for d in cls.depends_on)]
        if not ready:
            raise ValueError(f"dependency cycle among subsystems {sorted(pending)}")
        order.extend(ready)
        for name in ready:
            del pending[name]
    return order


class SessionState:
    """One instance of every subsystem; fold records, snapshot, restore, validate."""

    def __init__(self, registry: Mapping[str, type[Subsystem]] | None = None) -> None:
        registry = load_all() if registry is None else registry
        self.order: list[str] = dependency_order(registry)
        self.subsystems: dict[str, Subsystem] = {n: registry[n]() for n in self.order}
        self.routes: dict[str, list[Subsystem]] = {}
        for sub in self.subsystems.values():
            for kind in sub.handles:
                self.routes.setdefault(kind, []).append(sub)
        self.through_seq: int | None = None
        self.skipped: list[int] = []
        self.broken: dict[str, str] = {}  # subsystem -> why it stopped folding
        self.missing_from_snapshot: list[str] = []  # subsystems the last restored snapshot lacked

    def __getitem__(self, name: str) -> Subsystem:
        """Return the subsystem called `name`."""
        return self.subsystems[name]

    def get(self, kind: type[S]) -> S:
        """Return the subsystem of class `kind`, typed."""
        sub = self.subsystems[kind.name]
        if not isinstance(sub, kind):
            raise TypeError(f"subsystem {kind.name!r} is a {type(sub).__name__}, not {kind.__name__}")
        return sub

    def apply(self, record: Record) -> None:
        """Fold one record; a `snapshot` record restores its state instead."""
        seq, through = record.get("seq"), self.through_seq
        if seq is not None and through is not None and seq <= through:
            self.skipped.append(seq)
            return
        kind = record.get("type", "")
        if kind == "snapshot":
            state = record.get("state") or {}
            # a snapshot event stores {"subsystems": {name: state}, "summary": ...} or just the map
            states = state.get("subsystems", state) if isinstance(state, dict) else {}
            through = record.get("through_seq", seq)
            self.restore(states if isinstance(states, dict) else {},
                         through_seq=through if isinstance(through, int) else None)
        else:
            for sub in self.routes.get(kind, ()):
                if sub.name in self.broken:
                    continue
                try:
                    sub.apply(record)
                except Exception as exc:  # noqa: BLE001 - isolation is the point
                    where = f"{record.get('type')} seq {record.get('seq')}"
                    self.broken[sub.name] = f"failed to fold {where}: {exc!r}"
        if seq is not None and (self.through_seq is None or seq > self.through_seq):
            self.through_seq = seq

    def attach_log(self, log: Callable[[int, int, frozenset[str] | None], Iterable[Record]]
                   ) -> None:
        """Give every subsystem the thread's log, to read back what its state refers to by seq."""
        for sub in self.subsystems.values():
            sub.log = log

    def fold(self, records: Iterable[Record]) -> int:
        """Fold records in order; return how many were applied (not skipped)."""
        before, count = len(self.skipped), 0
        for record in records:
            self.apply(record)
            count += 1
        return count - (len(self.skipped) - before)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Return {name: state} of every healthy subsystem (what a `snapshot` event stores)."""
        return {n: s.snapshot() for n, s in self.subsystems.items() if n not in self.broken}

    def restore(self, snapshot: Mapping[str, Any], *, through_seq: int | None = None) -> list[str]:
        """Restore each subsystem from `snapshot`; return the names it lacks (left as they were)."""
        missing: list[str] = []
        for name, sub in self.subsystems.items():
            if name not in snapshot:
                missing.append(name)
                continue
            try:
                sub.restore(dict(snapshot[name]))
                self.broken.pop(name, None)
            except Exception as exc:  # noqa: BLE001
                self.broken[name] = f"failed to restore from snapshot: {exc!r}"
        if through_seq is not None:
            self.through_seq = through_seq
        self.missing_from_snapshot = missing
        return missing

    def validate(self, workspace: Workspace) -> tuple[list[Difference], list[Invalidation]]:
        """Validate every subsystem in dependency order against the workspace; never raises."""
        workspace = dataclasses.replace(workspace, file_hash=_memo(workspace.file_hash))
        differences: list[Difference] = []
        invalidations: list[Invalidation] = []
        failed: set[str] = set()
        for name, sub in self.subsystems.items():
            reason = self.broken.get(name)
            bad_deps = [d for d in sub.depends_on if d in failed]
            if reason is None and bad_deps:
                reason = f"not validated: depends on {', '.join(bad_deps)}, which failed"
            if reason is None:
                deps = {d: self.subsystems[d] for d in sub.depends_on}
                try:
                    found = sub.validate(workspace, deps)
                except Exception as exc:  # noqa: BLE001
                    reason = f"validation failed: {exc!r}"
                else:
                    differences.extend(found.differences)
                    invalidations.extend(found.invalidations)
            if reason is not None:
                failed.add(name)
                invalidations.append(Invalidation(name, reason))
        return differences, invalidations

    def summaries(self) -> dict[str, Any]:
        """Return {name: summary} for the report; a failing summary becomes {"error": ...}."""
        return {name: report.summary for name, report in self.reports().items()}

    def reports(self) -> dict[str, SubsystemReport]:
        """Return {name: summary and headline} of every subsystem; a failure is reported as such."""
        out: dict[str, SubsystemReport] = {}
        for name, sub in self.subsystems.items():
            try:
                out[name] = SubsystemReport(sub.summary(), sub.headline())
            except Exception as exc:  # noqa: BLE001
                out[name] = SubsystemReport({"error": repr(exc)}, f"unavailable: {exc!r}")
        return out


def _memo(fn: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """Cache a workspace's file_hash for one validation pass (several subsystems ask for a path)."""
    cache: dict[str, tuple[bool, Any]] = {}

    def cached(path: str) -> str | None:
        if path not in cache:
            try:
                cache[path] = (True, fn(path))
            except Exception as exc:  # noqa: BLE001 - replayed to every caller
                cache[path] = (False, exc)
        ok, value = cache[path]
        if not ok:
            raise value
        return value

    return cached
