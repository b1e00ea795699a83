"""Thin handlers for file content: diffs, one version's content (for a diff editor), rewind.

Registered with `rpc.rpc`; each calls one Keeper action on the domain worker and converts with a
small `lsp_*` helper. A rewind of the current thread goes through the current session.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...errors import BlobUnavailable
from ..protocol_content import (
    BlobParams,
    BlobResult,
    DiffParams,
    DiffResult,
    FileDiff,
    RewindParams,
    RewindResult,
    RewindStep,
    VersionRef,
)
from ..rpc import InvalidParams, rpc
from ..server import SessionKeeperServer as Server

if TYPE_CHECKING:
    from ...keeper.rewinding import RewindReport
    from ...recovery import diff as domain
    from ...recovery.versions import Version
    from ...store.blobs import BlobStore


@rpc("session/diff", DiffParams)
async def session_diff(ls: Server, p: DiffParams) -> DiffResult:
    """The thread's file changes in the range: one unified diff per file, both sides as versions."""

    def work() -> DiffResult:
        diffs = ls.keeper.diff(p.thread_id, from_seq=p.from_seq, to_seq=p.to_seq, path=p.path,
                               squash=True)
        return lsp_diff(diffs, blobs=ls.keeper.blobs)

    return await ls.run(work)


@rpc("session/blob", BlobParams)
async def session_blob(ls: Server, p: BlobParams) -> BlobResult:
    """The content of a file version the thread's history names (text, or a note why not)."""

    def work() -> BlobResult:
        try:
            data = ls.keeper.blob(p.thread_id, p.hash)
        except BlobUnavailable as exc:
            return BlobResult(hash=p.hash, text=None, size=None, note=f"{exc.name}: {exc.reason}")
        return lsp_blob(p.hash, data)

    return await ls.run(work)


@rpc("session/rewind", RewindParams)
async def session_rewind(ls: Server, p: RewindParams) -> RewindResult:
    """Restore the thread's files to their versions at `to_seq` (or undo the latest rewind)."""
    if p.undo == (p.to_seq is not None):
        raise InvalidParams("to_seq: give to_seq, or undo: true (not both)")
    report = await ls.run(lambda: ls.keeper.rewind(p.thread_id, to_seq=p.to_seq, paths=p.paths,
                                                   dry_run=p.dry_run, force=p.force,
                                                   undo=p.undo))
    if not p.dry_run:
        await ls.notify_status()
    return lsp_rewind(report)


# ---- converters ---------------------------------------------------------------------------------


def lsp_version(version: Version | None, *, blobs: BlobStore) -> VersionRef | None:
    """A domain version as a VersionRef (available: its blob is in the store, or it is absent)."""
    if version is None:
        return None
    available = version.hash is None or (not version.content and version.hash in blobs)
    return VersionRef(seq=version.seq, hash=version.hash, author=version.author,
                      available=available)


def lsp_diff(diffs: Sequence[domain.FileDiff], *, blobs: BlobStore) -> DiffResult:
    """session/diff's result."""
    return DiffResult(files=[FileDiff(path=d.path, before=lsp_version(d.old, blobs=blobs),
                                      after=lsp_version(d.new, blobs=blobs), unified=d.text,
                                      note=d.note or None) for d in diffs])


def lsp_blob(key: str, data: bytes) -> BlobResult:
    """session/blob's result: the text, or why there is none."""
    from ...recovery.content import is_binary

    if is_binary(data):
        return BlobResult(hash=key, text=None, size=len(data), note="binary content")
    try:
        return BlobResult(hash=key, text=data.decode("utf-8"), size=len(data), note=None)
    except UnicodeDecodeError:
        return BlobResult(hash=key, text=None, size=len(data), note="not UTF-8 text")


def lsp_rewind(report: RewindReport) -> RewindResult:
    """session/rewind's result."""
    return RewindResult(steps=[RewindStep(**row) for row in report.steps()],
                        rewind_seq=report.rewind_seq, undo_available=report.undo_available)
