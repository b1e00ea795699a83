"""Child process of the I/O fault tests: records through the public API, one command per line.

    python fault_child.py STORE WORKSPACE

It runs unmodified under `fiu-run -x` (libfiu's POSIX preload: the parent makes write() or
fsync() fail with `fiu-ctrl`) or with an RLIMIT_FSIZE it sets itself (`limit`). Replies go out
with os.writev, never write(), so a failing write() cannot silence the protocol.

Once imported and ready it says `H <pid>`. Commands (stdin) and replies (stdout, one line each):
  start                      -> `R <thread> <session> <rollout path>` | `E …`
  record <durability> <tag> <bytes>
                             -> `A <seq> <durability> <duplicate>` | `E <name> <exit> <errno> <msg>`
  begin <operation id>       -> `T <action> <seq>` | `E …`   (begin_operation: durable first)
  limit <bytes>              -> `L`   (RLIMIT_FSIZE soft limit; SIGXFSZ is ignored)
  size                       -> `S <bytes of the rollout the recorder has written>`
  close                      -> `C` | `E …`
An error line names the typed error (`store_full`, `store_io_error`, `durability_lost`,
`read_only`, …; `OSError` when untyped), its exit code, and the errno of its cause.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from typing import Any

from sessionkeeper.api import Keeper
from sessionkeeper.errors import SessionKeeperError


def _out(line: str) -> None:
    os.writev(1, [line.replace("\n", " ").encode() + b"\n"])


def _error(exc: BaseException) -> str:
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    number = getattr(cause, "errno", None)
    if isinstance(exc, SessionKeeperError):
        return f"E {exc.name} {exc.exit_code} {number} {exc}"
    return f"E {type(exc).__name__} - {number} {exc}"


def main(store: str, workspace: str) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG as an error, not a fatal signal
    keeper = Keeper(store, durability="written")
    session: Any = None
    _out(f"H {os.getpid()}")
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        try:
            if words[0] == "start":
                session = keeper.start(workspace, title="fault trial")
                _out(f"R {session.thread_id} {session.session_id} {session.path}")
            elif words[0] == "record":
                level, tag, size = words[1], words[2], int(words[3])
                ack = session.record({"type": "message", "role": "user",
                                      "text": f"{tag} " + "x" * size}, durability=level)
                _out(f"A {ack.seq} {ack.durability.value} {int(ack.duplicate)}")
            elif words[0] == "begin":
                ticket = session.begin_operation(words[1], "shell", {"cmd": "make deploy"})
                _out(f"T {ticket.action} {ticket.seq}")
            elif words[0] == "limit":
                hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
                resource.setrlimit(resource.RLIMIT_FSIZE, (int(words[1]), hard))
                _out("L")
            elif words[0] == "size":
                _out(f"S {session.writer.recorder.size}")
            elif words[0] == "close":
                session.close()
                _out("C")
            else:
                _out(f"E unknown - - {words[0]}")
        except Exception as exc:  # every failure is a reply: the parent judges it
            _out(_error(exc))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
