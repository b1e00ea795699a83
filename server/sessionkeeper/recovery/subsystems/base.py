"""The one interface every restorable subsystem implements, and the registry that finds them.

A subsystem folds stored records (plain dicts `{"seq", "ts", "type", ...}`; optional fields may be
absent, so read them with `.get(key, default)`) into its own state, snapshots and restores that
state as JSON-able dicts, and validates itself against the current workspace.
Adding a subsystem is adding one module in this package that decorates its class with `@register`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from ...events import Record
from ..findings import Difference, Findings, Invalidation, SubsystemReport, Workspace

__all__ = ["REGISTRY", "Difference", "Findings", "Invalidation", "Record", "Subsystem",
           "SubsystemReport", "Workspace", "register"]


class Subsystem:
    """Base class: one kind of restorable session state."""

    name: ClassVar[str]
    depends_on: ClassVar[tuple[str, ...]] = ()
    handles: ClassVar[frozenset[str]] = frozenset()  # record types folded by apply()
    log: Callable[[int, int, frozenset[str] | None], Iterable[Record]] | None = None
    """The thread's records by seq (store.log), for what a snapshot refers to instead of copying."""

    def apply(self, record: Record) -> None:
        """Fold one record (whose type is in `handles`) into the state."""
        raise NotImplementedError

    def snapshot(self) -> dict[str, Any]:
        """Return the state as a JSON-able dict."""
        raise NotImplementedError

    def restore(self, state: dict[str, Any]) -> None:
        """Replace the state with one produced by snapshot()."""
        raise NotImplementedError

    def validate(self, workspace: Workspace, deps: Mapping[str, Subsystem]) -> Findings:
        """Compare the restored state with the workspace; `deps` holds the subsystems in depends_on."""
        return Findings()

    def summary(self) -> dict[str, Any]:
        """Return the part of the state a report shows (defaults to the snapshot)."""
        return self.snapshot()

    def headline(self) -> str:
        """One line for humans saying what was restored (empty: nothing worth a line)."""
        return ""


REGISTRY: dict[str, type[Subsystem]] = {}


def register(cls: type[Subsystem]) -> type[Subsystem]:
    """Class decorator: make a subsystem known to the orchestrator."""
    if cls.name in REGISTRY:
        raise ValueError(f"subsystem {cls.name!r} registered twice")
    REGISTRY[cls.name] = cls
    return cls
