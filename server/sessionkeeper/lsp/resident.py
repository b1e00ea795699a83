"""The resident reader the language server keeps for the command line (`cli.resident`).

While an editor runs the server, `sessionkeeper list`, `show`, `--check-resume` and `start` of
its store are answered by a child of this resident, without ~50 ms of imports (`cli.relay`). It
starts `DELAY_S` after `initialized`, so its ~0.2 s of imports cost the editor's start-up nothing
(not at a lower priority: its children answer the user). It reads its stdin from this process,
so it stops when the server exits, however it exits (kill -9 included). Not started when
$SESSIONKEEPER_RESIDENT is 0, off Linux, or when the socket's path is too long for a Unix
socket; it exits at once when another resident serves the store. Once it ended, a listing
starts it again when no resident answers at the socket (at most every `RETRY_S`): a second
window takes over when the first one closes, and an upgrade is served by the new code.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import sys

from ..store.home import default_root, resident_socket

log = logging.getLogger("sessionkeeper.lsp")

DELAY_S = 2.0
"""How long after `initialized` the resident is started."""
RETRY_S = 5.0
"""How soon after it started a listing may start it again, once it ended (another window's
resident served the store, or the package changed: the new one runs the new code)."""


def start(store: str | None) -> subprocess.Popen[bytes] | None:
    """Start the resident for `store` (None when it should not run or cannot start)."""
    path = resident_socket(store or default_root())
    if path is None:
        return None
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sessionkeeper.cli.resident", path], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=None, start_new_session=True)
    except OSError as exc:
        log.warning("the resident reader did not start: %s", exc)
        return None
    log.info("resident reader started (pid %d) on %s", proc.pid, path)
    return proc


def answering(store: str | None) -> bool:
    """True when a resident of `store` accepts a connection now."""
    path = resident_socket(store or default_root())
    if path is None:
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except OSError:
            return False
    return True


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    """Stop the resident: its stdin closed, it removes its socket and exits."""
    if proc is None or proc.stdin is None:
        return
    try:
        proc.stdin.close()
        proc.wait(timeout=2)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
