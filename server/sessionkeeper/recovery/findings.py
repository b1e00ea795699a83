"""What validation finds: differences, invalidations, and the workspace it validates against.

Plain values shared by the baseline comparison, the subsystems and the report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..events import GitBaseline
from .difference import Difference as Difference  # its own module, here with the rest


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
    baseline: GitBaseline | None  # captured now; None outside git or when the cwd is missing
    file_hash: Callable[[str], str | None]  # workspace-relative path -> sha256 hex, None if missing
    requested: Mapping[str, Any]  # what the resuming client asks for: {"permissions": {...}, "model": "..."}
    git_note: str | None = None  # why git checks were skipped or failed here (None: they ran)


@dataclass(frozen=True)
class SubsystemReport:
    """What a report shows of one subsystem: its summary data and one line for humans."""

    summary: dict[str, Any]
    headline: str
