"""The background fold of an agent session's spool: `python -m sessionkeeper.hooks.catch_up STORE
AGENT SESSION`, started detached by a tool hook (`fast`) when none is running for the session.

It waits until the session's calls pause (`QUIET_S` without a new line), folds the spool into the
journal and leaves a fresh digest (so the next resume is proven `ok` at once), and does so again
while calls keep coming, for at most `LIFETIME_S`. Invariants: one catch-up per session (an
exclusive flock held for its whole life; another one exits at once); a journal held by another
process is left alone (its holder folds); it never writes anything but the journal, the digest and
the spool's own files, and never fails anyone (its output goes nowhere).
"""

from __future__ import annotations

import fcntl
import os
import sys
import time

from ..store import spool

QUIET_S = 1.0
"""How long the spool must stay unchanged before it is folded."""
LIFETIME_S = 600.0
"""How long one catch-up keeps watching at most (the next call starts another)."""


def _lock_path(journal_root: str, session_id: str) -> str:
    return os.path.join(spool.spool_dir(journal_root), session_id + ".catch-up")


def running(journal_root: str, session_id: str) -> bool:
    """True while a catch-up holds the session."""
    try:
        fd = os.open(_lock_path(journal_root, session_id),
                     os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError:
        return True  # nothing can be started there anyway
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _size(journal_root: str, session_id: str) -> int:
    try:
        return os.stat(spool.spool_path(journal_root, session_id)).st_size
    except FileNotFoundError:
        return -1


def run(store: str, agent: str, session_id: str) -> int:
    """Fold the session's spool whenever its calls pause; the folds made."""
    from pathlib import Path

    from ..errors import SessionKeeperError
    from ..keeper.journals import journal_root
    from .keeping import forget, keeper_of, remember

    root = journal_root(store, agent)
    fd = os.open(_lock_path(root, session_id), os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0
    folds, deadline = 0, time.monotonic() + LIFETIME_S
    keeper = keeper_of(store)
    while time.monotonic() < deadline and spool.pending(root, session_id):
        size = _size(root, session_id)
        time.sleep(QUIET_S)
        if _size(root, session_id) != size:
            continue  # calls are still coming
        forget(Path(store), agent, session_id)
        try:
            keeper.journal(agent, session_id, wait_s=0).close()
        except (SessionKeeperError, OSError):
            return folds  # busy (its holder folds) or unwritable: nothing to do here
        remember(keeper, Path(store), agent, session_id)
        folds += 1
    os.close(fd)
    return folds


def main(argv: list[str]) -> int:
    """The detached process: always 0 (nobody reads its failure)."""
    try:
        run(argv[0], argv[1], argv[2])
    except Exception:  # noqa: BLE001 - its output goes nowhere
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
