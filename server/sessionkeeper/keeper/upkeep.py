"""The store's upkeep: archive, unarchive and delete threads; check and rebuild the index."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ids
from ..store.catalog import Progress as Progress  # the API's name for it

if TYPE_CHECKING:
    from ..store.fsck import FsckReport
    from .ground import Ground



class Upkeep:
    """Moves, deletions and checks of the store's threads."""

    def __init__(self, ground: Ground) -> None:
        """The store and open sessions of `ground`."""
        self.ground = ground

    def archive(self, thread_id: str) -> int:
        """Move a thread's rollouts to archived_sessions/; returns files moved."""
        return self.ground.store.set_archived(thread_id, True)

    def unarchive(self, thread_id: str) -> int:
        """Move a thread's rollouts back to sessions/; returns files moved."""
        return self.ground.store.set_archived(thread_id, False)

    def delete(self, thread_id: str) -> int:
        """Delete a thread for good (its rollouts and index rows); returns rollouts removed.

        This Keeper's own open session of the thread is closed first; one open in another
        process makes this raise ThreadBusy.
        """
        thread = ids.thread_id(thread_id)
        live = self.ground.live.get(thread)
        if live is not None:
            live.close()
        return self.ground.store.delete_thread(thread)

    def fsck(self, *, repair: bool = False) -> FsckReport:
        """Compare the index with the rollouts, here and in each agent's journal store (its
        rollouts and kept spool files: `report.journals`); with `repair`, fix what can be fixed."""
        from ..store.fsck import fsck
        from ..store.store import Store
        from .journals import journal_roots

        store = self.ground.store
        report = fsck(store, repair=repair)
        for agent, root in journal_roots(store.layout.root).items():
            journal = Store(root, read_only=self.ground.read_only)
            try:
                report.journals[agent] = fsck(journal, repair=repair)
            finally:
                journal.close_index()
        return report

    def reindex(self, progress: Progress | None = None) -> dict[str, int]:
        """Rebuild the index from the rollouts."""
        return self.ground.store.rebuild(progress)
