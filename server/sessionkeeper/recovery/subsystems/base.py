"""The one interface every restorable subsystem implements, and the registry that finds them.

A subsystem folds stored records (plain dicts `{"seq", "ts", "type", ...}`; optional fields may be
absent, so read them with `.get(key, default)`) into its own state, snapshots and restores that
state as JSON-able dicts, and validates itself against the current workspace.
Adding a subsystem is adding one module in this package that decorates its class with `@register`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

Record = dict[str, Any]


@dataclass(frozen=True)
class Difference:
    """One way the current workspace differs from what was recorded (drift or block)."""

    kind: str  # cwd_missing other_repository relocated branch head file_changed file_missing permissions …
    recorded: Any = None
    current: Any = None
    detail: str = ""


@dataclass(frozen=True)
class Invalidation:
    """Restored state that can no longer be trusted, with the reason."""

    subsystem: str
    reason: str


@dataclass(frozen=True)
class Findings:
    """What one subsystem's validation found."""

    differences: list[Difference] = field(default_factory=list)
    invalidations: list[Invalidation] = field(default_factory=list)


@dataclass(frozen=True)
class Workspace:
    """The workspace as it is now, as subsystems see it during validation (read-only)."""

    root: str  # absolute path of the workspace the user resumes from
    exists: bool
    baseline: Any  # events.GitBaseline captured now, or None outside git / when the cwd is missing
    file_hash: Callable[[str], str | None]  # workspace-relative path -> sha256 hex, None if missing
    requested: Mapping[str, Any]  # what the resuming client asks for: {"permissions": {...}, "model": "..."}


class Subsystem:
    """Base class: one kind of restorable session state."""

    name: ClassVar[str]
    depends_on: ClassVar[tuple[str, ...]] = ()
    handles: ClassVar[frozenset[str]] = frozenset()  # record types folded by apply()

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


REGISTRY: dict[str, type[Subsystem]] = {}


def register(cls: type[Subsystem]) -> type[Subsystem]:
    """Class decorator: make a subsystem known to the orchestrator."""
    if cls.name in REGISTRY:
        raise ValueError(f"subsystem {cls.name!r} registered twice")
    REGISTRY[cls.name] = cls
    return cls
