"""Editor lifecycle features: initialize (lazy), initialized (startup hooks, auto-resume),
shutdown, and which documents the editor has open."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from ..errors import SessionKeeperError
from . import resident
from .options import parse_options
from .server import SessionKeeperServer as Server

log = logging.getLogger("sessionkeeper.lsp")


def on_initialize(ls: Server, params: types.InitializeParams) -> None:
    """Remember the workspace root, the options and the editor; nothing else (start-up is lazy)."""
    ls.options, ls.option_problems = parse_options(params.initialization_options)
    ls.editor = params.client_info.name if params.client_info else None
    root = ls.options.workspace
    if not root and params.workspace_folders:
        root = to_fs_path(params.workspace_folders[0].uri)
    if not root and params.root_uri:
        root = to_fs_path(params.root_uri)
    root = root or params.root_path
    ls.workspace_root = os.path.realpath(root) if isinstance(root, str) and root else None


async def on_initialized(ls: Server, params: Any) -> None:
    """Report bad options; fire startup hooks and auto-resume when configured; start the command
    line's resident reader a moment later (`resident`).

    All run after the `initialized` handshake, in the background; nothing of the store runs when
    neither hooks nor auto-resume are configured (start-up stays lazy).
    """
    for problem in ls.option_problems:
        ls.tell(f"Session Keeper: initializationOptions.{problem}", kind=types.MessageType.Warning)
    loop = asyncio.get_running_loop()
    if any("startup" in hook.sources for hook in ls.options.hooks):
        loop.create_task(_startup_hooks(ls))
    if ls.options.autoResume and ls.workspace_root:
        loop.create_task(_auto_resume(ls, ls.workspace_root))
    loop.call_later(resident.DELAY_S, ls.start_resident)


async def _startup_hooks(ls: Server) -> None:
    context = {"workspace": ls.workspace_root, "editor": ls.editor}
    run = await ls.run(lambda: ls.keeper.hooks.run("startup", context))
    for failure in run.failures:
        ls.tell(f"Session Keeper: startup hook {failure['hook']} failed: {failure['error']}",
                kind=types.MessageType.Warning)
    log.info("startup hooks: %d ran, %d failed", len(run.results), len(run.failures))


async def _auto_resume(ls: Server, workspace: str) -> None:
    try:
        outcome = await ls.resume_flow(None, workspace=workspace, decision=None, latest=True)
        log.info("auto-resume: %s", outcome.report.verdict)
    except SessionKeeperError as exc:
        log.info("auto-resume: nothing resumed (%s)", exc)
    except Exception:  # noqa: BLE001
        log.exception("auto-resume failed")


async def on_shutdown(ls: Server, params: Any) -> None:
    """Close the current session (final snapshot, fsync, unlock) before the client exits us."""
    ls.stop_watching()
    await ls.release_current()


def on_did_open(ls: Server, params: types.DidOpenTextDocumentParams) -> None:
    """Track files open in the editor (they are the user's when they change on disk)."""
    ls.documents_synced = True
    path = to_fs_path(params.text_document.uri)
    if path:
        ls.open_paths.add(os.path.realpath(path))


def on_did_close(ls: Server, params: types.DidCloseTextDocumentParams) -> None:
    """Forget a file closed in the editor."""
    path = to_fs_path(params.text_document.uri)
    if path:
        ls.open_paths.discard(os.path.realpath(path))
