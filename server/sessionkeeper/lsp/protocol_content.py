"""The `session/` protocol's content types: diff, blob and rewind params and results.

Kept apart from `protocol.py` (same rules: frozen dataclasses, the one definition of the wire;
the schema is generated from the handlers that use them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import annotated_types as at

from ..events import RewindAction, RewindOutcome
from ..ids import ThreadId
from .protocol import _DOCS, Params

# ---- params ---------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DiffParams(Params):
    """session/diff: the thread's file changes after `from_seq` up to `to_seq`, one diff per file."""

    thread_id: ThreadId
    """The thread."""
    from_seq: Annotated[int, at.Ge(0)] | None = None
    """Changes after this seq (default: from the content before the session)."""
    to_seq: Annotated[int, at.Ge(0)] | None = None
    """Changes up to this seq (default: the latest)."""
    path: str | None = None
    """Only this file (workspace-relative)."""


@dataclass(frozen=True, kw_only=True)
class BlobParams(Params):
    """session/blob: the content of one file version of the thread (for a diff editor)."""

    thread_id: ThreadId
    """The thread whose file history names the version."""
    hash: Annotated[str, at.Len(64, 64)]
    """The version's sha256 (a VersionRef's hash)."""


@dataclass(frozen=True, kw_only=True)
class RewindParams(Params):
    """session/rewind: restore the thread's files to their versions at `to_seq`, or undo the last rewind."""

    thread_id: ThreadId
    """The thread."""
    to_seq: Annotated[int, at.Ge(0)] | None = None
    """The seq whose versions are restored (required unless `undo`)."""
    paths: list[str] | None = None
    """Only these files (workspace-relative; default: every file of the history)."""
    dry_run: bool = False
    """Plan only: say what would change, change nothing."""
    force: bool = False
    """Also overwrite files changed outside the session (their content is kept as blobs first)."""
    undo: bool = False
    """Undo the latest rewind that changed a file."""


# ---- results --------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class VersionRef:
    """One side of a diff: a file version."""

    __pydantic_config__ = _DOCS
    seq: int | None
    """The record that wrote it (null: the content before the session)."""
    hash: str | None
    """Its sha256 (null: the file is absent)."""
    author: str
    """agent, user, external, rewind (or several joined by +); external before the session."""
    available: bool
    """Its content is in the blob store (session/blob returns it); true for an absent file (empty)."""


@dataclass(frozen=True, kw_only=True)
class FileDiff:
    """The change of one file over the range."""

    __pydantic_config__ = _DOCS
    path: str
    before: VersionRef | None
    """The version before the range (null: unknown)."""
    after: VersionRef | None
    """The last version in the range."""
    unified: str | None
    """The unified diff text (null: see note)."""
    note: str | None
    """Why there is no diff: binary, content not kept, unknown before, unreadable blob..."""


@dataclass(frozen=True, kw_only=True)
class DiffResult:
    """session/diff: one entry per file changed in the range."""

    __pydantic_config__ = _DOCS
    files: list[FileDiff]


@dataclass(frozen=True, kw_only=True)
class BlobResult:
    """session/blob: a file version's content."""

    __pydantic_config__ = _DOCS
    hash: str
    text: str | None
    """The content as UTF-8 text (null: binary, not UTF-8, or unreadable; see note)."""
    size: int | None
    """Its size in bytes (null: unreadable)."""
    note: str | None
    """Why there is no text."""


@dataclass(frozen=True, kw_only=True)
class RewindStep:
    """What a rewind does (or did) to one file."""

    __pydantic_config__ = _DOCS
    path: str
    action: RewindAction
    """The plan: restore, delete, unchanged, refused (changed outside the session; force
    overrides), unavailable (no content to restore)."""
    reason: str
    """Why, for humans."""
    outcome: RewindOutcome | None
    """After execution: written, deleted, unchanged, skipped, stale (changed meanwhile), failed."""
    before_hash: str | None
    """The file's hash on disk before (null: absent)."""
    after_hash: str | None
    """Its hash after (planned or done; null: absent)."""


@dataclass(frozen=True, kw_only=True)
class RewindResult:
    """session/rewind's answer."""

    __pydantic_config__ = _DOCS
    steps: list[RewindStep]
    rewind_seq: int | None
    """The seq of the rewind's record (null for a dry run); undo goes back to just before it."""
    undo_available: bool
    """The thread has a rewind that undo would reverse."""
