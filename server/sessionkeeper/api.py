"""The Python API for agent harnesses: start, record, resume, fork, archive, list, read.

    keeper = Keeper()                                   # store from $SESSIONKEEPER_HOME or per-user dir
    with keeper.start("/path/to/repo", title="fix payment") as session:
        session.record({"type": "message", "role": "user", "text": "fix the rounding bug"})
    report, session = keeper.resume(thread_id, workspace="/path/to/repo")

`Keeper` is composed of one capability per module, each built on the one below it: `starting`
(settings, opening sessions), `reading` (listing, replay; with the agents' threads and journals of
`agent_threads` and `journals`), `resuming` (check, resume, fork), and `content_actions` (diffs,
rewind, trailers, gc). This module adds what is left: archive, delete, fsck and reindex. The mixins
declaring stand-ins for what `Keeper` provides come last in its bases, so the real ones win.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import ids
from .keeper.catalog import Progress
from .keeper.content import ContentActions
from .keeper.resuming import Resuming

if TYPE_CHECKING:
    from .store.fsck import FsckReport

__all__ = ["Keeper", "Progress"]


class Keeper(Resuming, ContentActions):
    """One store, its hooks and its defaults; creates, resumes and forks sessions.

    Content settings: files over `content_limit_bytes` are kept by hash only, secret-named files
    too unless `allow_secret_files`; `blob_cap_bytes` caps the blob store when `gc()` runs.
    `agents`: the agents' own logs listed and checked as threads (None: only our rollouts).
    """

    def archive(self, thread_id: str) -> int:
        """Move a thread's rollouts to archived_sessions/; returns files moved."""
        return self.store.set_archived(thread_id, True)

    def unarchive(self, thread_id: str) -> int:
        """Move a thread's rollouts back to sessions/; returns files moved."""
        return self.store.set_archived(thread_id, False)

    def delete(self, thread_id: str) -> int:
        """Delete a thread for good (its rollouts and index rows); returns rollouts removed.

        This Keeper's own open session of the thread is closed first; one open in another
        process makes this raise ThreadBusy.
        """
        thread = ids.thread_id(thread_id)
        live = self.live.get(thread)
        if live is not None:
            live.close()
        return self.store.delete_thread(thread)

    def fsck(self, *, repair: bool = False) -> FsckReport:
        """Compare the index with the rollouts; with `repair`, fix what can be fixed."""
        from .store.fsck import fsck

        return fsck(self.store, repair=repair)

    def reindex(self, progress: Progress | None = None) -> dict[str, int]:
        """Rebuild the index from the rollouts."""
        return self.store.rebuild(progress)
