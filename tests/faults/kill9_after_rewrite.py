"""Child process: a Keeper rewind that SIGKILLs itself once every file is rewritten, before its end
record (the moment a `kill -9` leaves the most files rewound and nothing recorded of them).

    python kill9_after_rewrite.py STORE SESSION_ID TO_SEQ

Runs the steps of `Keeper.rewind` (rewinding's plan, begin record, execution) under the session's
writer and record locks, then kills itself with SIGKILL.
"""

from __future__ import annotations

import os
import signal
import sys

from sessionkeeper.api import Keeper
from sessionkeeper.keeper import rewinding
from sessionkeeper.recovery.rewind import execute


def main(store: str, session_id: str, to_seq: int) -> None:
    keeper = Keeper(store)
    session = keeper.attach(session_id)
    with session.exclusive():
        planned = rewinding.plan(session.state, workspace=session.workspace, to_seq=to_seq,
                                 paths=None, force=False, blobs=keeper.blobs,
                                 allow_secret_files=False)
        rewinding._begin(session, planned, undo_of=None, paths=None)
        execute(planned, workspace=session.workspace, blobs=keeper.blobs)
        os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
