"""The agents' roots in the editor: a watcher that marks them changed, and an import's $/progress.

The watcher (watchfiles, one daemon thread) starts after the first listing imported the agents —
never at start-up — and watches the roots that exist then; any change there makes the Keeper
import again on the next listing (`Keeper.agents_changed`). It imports watchfiles a moment later
(START_DELAY_S: the first listing's answer goes out without it) and says it is watching only
once watchfiles is (`on_watching`, at its first yield): until then listings stat the roots as
without a watcher, and the first listing after it stats them once more, so a change made before
the watch began is never missed. A root that did not exist is looked for again on each listing
(a cheap stat), and the watcher restarted when it appears.
`ImportProgress` turns an import's `(done, total)` calls, made on the domain worker, into
work-done progress on the event loop, and only for an import of at least `PROGRESS_MIN` files.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from lsprotocol import types

log = logging.getLogger("sessionkeeper.lsp.agents")
PROGRESS_MIN = 50
"""An import reading at least this many files reports $/progress."""
START_DELAY_S = 0.25
"""How long the watcher waits before importing watchfiles (not beside the first answer)."""


class RootsWatcher:
    """Watches the agents' roots in a daemon thread; calls `on_change` once per batch of changes
    and `on_watching` once, when watchfiles watches."""

    def __init__(self, roots: Sequence[str], *, on_change: Callable[[], Any],
                 on_watching: Callable[[], Any] | None = None) -> None:
        self.roots = sorted(set(roots))
        self.watched = [r for r in self.roots if os.path.isdir(r)]
        self.on_change = on_change
        self.on_watching = on_watching
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start watching (nothing to do when no root exists yet)."""
        if not self.watched:
            self.ready.set()
            return
        self._thread = threading.Thread(target=self._run, name="sessionkeeper-agent-roots",
                                        daemon=True)
        self._thread.start()

    def stale(self) -> bool:
        """True when a root that was missing exists now (the watcher must be started again)."""
        return any(os.path.isdir(r) for r in self.roots if r not in self.watched)

    def stop(self, timeout: float = 2.0) -> None:
        """Stop watching and wait (briefly) for the thread to end."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            if self._stop.wait(START_DELAY_S):
                return
            from watchfiles import watch

            watching = False
            for batch in watch(*self.watched, debounce=200, step=50, stop_event=self._stop,
                               raise_interrupt=False, ignore_permission_denied=True,
                               yield_on_timeout=True, rust_timeout=1000):
                if self._stop.is_set():
                    break
                if not watching and self.on_watching is not None:
                    self.on_watching()
                watching = True
                self.ready.set()
                if batch:
                    self.on_change()
        except Exception:  # noqa: BLE001 - a dead watcher must not take the server with it
            log.exception("watching the agents' roots %s stopped", self.watched)
            self.on_change()  # listings import on every call again (nothing is missed)
        finally:
            self.ready.set()


class ImportProgress:
    """An import's progress as LSP work-done progress (created only for a large import)."""

    def __init__(self, server: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.server = server
        self.loop = loop
        self.token: str | None = None

    def supported(self) -> bool:
        """True when the client takes work-done progress the server creates."""
        window = self.server.client_window()
        return window is not None and bool(window.work_done_progress)

    def __call__(self, done: int, total: int) -> None:
        """Report `done` of `total` files (on the domain worker)."""
        if total < PROGRESS_MIN:
            return
        progress = self.server.work_done_progress
        if self.token is None:
            if done >= total or not self.supported():
                return
            self.token = f"sessionkeeper-agents-{uuid.uuid4()}"
            try:
                asyncio.run_coroutine_threadsafe(progress.create_async(self.token),
                                                 self.loop).result(timeout=10)
            except Exception:  # noqa: BLE001 - a client that does not answer gets no progress
                log.warning("the client did not accept a progress token; importing without it")
                self.token = ""
                return
            self.loop.call_soon_threadsafe(progress.begin, self.token, types.WorkDoneProgressBegin(
                title="Session Keeper: importing agent sessions", message=f"0/{total} files",
                percentage=0, cancellable=False))
        if not self.token:
            return
        self.loop.call_soon_threadsafe(progress.report, self.token, types.WorkDoneProgressReport(
            message=f"{done}/{total} files", percentage=int(100 * done / total)))
        if done >= total:
            self.end(f"{total} files imported")

    def end(self, message: str) -> None:
        """End the progress (if it began)."""
        if self.token:
            token, self.token = self.token, ""
            self.loop.call_soon_threadsafe(self.server.work_done_progress.end, token,
                                           types.WorkDoneProgressEnd(message=message))
