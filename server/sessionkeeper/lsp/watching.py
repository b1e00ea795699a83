"""The server watching the current session's workspace: batches recorded, live drift refreshed.

Invariants: at most one watcher, on the current session's workspace (restarted on a new root,
stopped when no session is current or the server closes); batches arrive on the watcher thread
and are handed to the event loop, then recorded on the domain worker. A batch is recorded only
in the session whose workspace is watched; files a move of HEAD explains are the checkout's (one
`git_moved` record, no file_change). A failure to record is logged, never raised: a watcher
never takes the server down.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING, Any

from .live import Live, assess_live
from .options import ServerOptions
from .watch import Batch, Change, Watcher, file_change_events

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..api import Keeper
    from ..session.live import Session
    from .gitops import Head

log = logging.getLogger("sessionkeeper.lsp")


class WorkspaceWatching:
    """Mixin of `SessionKeeperServer`: the workspace watcher of its current session."""

    options: ServerOptions
    session: Session | None
    watcher: Watcher | None
    live: Live | None
    git_head: Head | None
    open_paths: set[str]
    documents_synced: bool
    _loop: asyncio.AbstractEventLoop | None
    _keeper: Keeper | None
    _closed: bool

    if TYPE_CHECKING:  # provided by SessionKeeperServer
        async def run(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any: ...

        async def notify_status(self, *, force: bool = False) -> None: ...

        def notify_threads(self, reason: str) -> None: ...

    def ensure_watching(self, session: Session) -> None:
        """Watch the current session's workspace and git state (started lazily, restarted on a
        new root); event-loop thread."""
        if not self.options.watch or self._closed:
            return
        root = session.workspace
        if self.watcher is not None and self.watcher.root == root:
            return
        from . import gitops  # git is asked once a session is current, never at start-up

        self.stop_watching()
        self._loop = asyncio.get_running_loop()
        store_root = str(self._keeper.store.layout.root) if self._keeper else None
        dirs = gitops.git_dirs(root)
        self.watcher = Watcher(root, ignore=[store_root] if store_root else [],
                               git_dirs=[dirs.git_dir, dirs.common_dir] if dirs else [],
                               on_changes=self._on_batch_threadsafe)
        self.watcher.start()

    def _on_batch_threadsafe(self, batch: Batch) -> None:
        """The watcher thread hands a batch to the event loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            asyncio.run_coroutine_threadsafe(self.handle_batch(batch), loop)

    async def handle_batch(self, batch: Batch) -> None:
        """Record a watched batch, refresh live drift, and tell the client what changed."""
        try:
            moved = await self.run(self.on_batch, batch)
        except Exception:  # noqa: BLE001 - a watcher must never take the server down
            log.exception("could not handle a watched batch")
            return
        await self.notify_status()
        if moved:
            self.notify_threads("git")

    def refresh_live(self, session: Session) -> None:
        """Check the session against its workspace now (domain worker only)."""
        if self.session is not session:
            return
        from . import gitops

        self.git_head = gitops.head(session.workspace)
        self.live = assess_live(session.state, session.workspace)

    def on_batch(self, batch: Batch) -> bool:
        """Record a batch in the current session (domain worker); True when HEAD moved.

        Files a move of HEAD explains are the checkout's: one git_moved record, no file_change.
        """
        from . import gitops
        from .checkout import explained_by_move, git_moved_event

        session = self.session
        if session is None or self.watcher is None or session.workspace != self.watcher.root:
            return False
        root, old = session.workspace, self.git_head
        if batch.git and self._keeper is not None and self._keeper.baselines is not None:
            self._keeper.baselines.invalidate(root)  # the picker's git cache (it checks too)
        now = gitops.head(root) if batch.git or batch.changes else old
        changes, moved = batch.changes, now != old
        if moved:
            explained = explained_by_move(root, old, now, [c.path for c in changes])
            changes = [c for c in changes if c.path not in explained]
            from ..recovery.subsystems.file_history import FileHistory

            history = session.state.get(FileHistory)
            event = git_moved_event(old, now, explained=explained,
                                    seen=lambda p: history.last(p) is not None)
            try:
                session.record(event)
            except Exception:  # noqa: BLE001
                log.exception("could not record a move of HEAD")
            log.info("HEAD moved: %s -> %s (%d file(s) by the move)", old, now, len(explained))
        self.record_changes(changes)
        self.refresh_live(session)
        return moved

    def stop_watching(self) -> None:
        """Stop the workspace watcher, if one runs."""
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()

    def record_changes(self, changes: list[Change]) -> int:
        """Record watched file changes in the current session (domain worker only); returns count."""
        session = self.session
        if session is None or self.watcher is None:
            return 0
        root = session.workspace
        if root != self.watcher.root:
            return 0
        from ..recovery.subsystems.file_history import FileHistory

        events = file_change_events(
            changes, last=session.state.get(FileHistory).last,
            author_of=lambda change: self._author_of(root, change))
        if not events:
            return 0
        try:
            session.record_many(list(events))
        except Exception:  # noqa: BLE001 - a watcher must never take the server down
            log.exception("could not record %d file change(s)", len(events))
            return 0
        log.info("recorded %d file change(s)", len(events))
        return len(events)

    def _author_of(self, root: str, change: Change) -> str:
        """user: changed on disk while the editor syncs nothing, or open in the editor; else external."""
        if change.deleted:
            return "external"
        if not self.documents_synced:
            return "user"
        return "user" if os.path.join(root, change.path) in self.open_paths else "external"
