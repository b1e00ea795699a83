"""What the prepare-commit-msg hook runs in these tests (phase 2: `sessionkeeper trailer --hook`).

    python trailer_hook_cmd.py MSG_FILE [SOURCE [SHA]]

Reads the thread's file history from $SK_TEST_HISTORY (JSON), blobs from $SK_TEST_STORE, the
thread id from $SK_TEST_THREAD; runs in the repository (git's hook working directory).
"""

from __future__ import annotations

import json
import os
import sys

from sessionkeeper.recovery.trailers import KNOWN_AGENTS, trail_commit
from sessionkeeper.store.blobs import BlobStore

if __name__ == "__main__":
    with open(os.environ["SK_TEST_HISTORY"]) as handle:
        history = json.load(handle)
    trail_commit(sys.argv[1], workspace=os.getcwd(), history=history,
                 read=BlobStore(os.environ["SK_TEST_STORE"]).get, coauthor=KNOWN_AGENTS["claude"],
                 thread_id=os.environ["SK_TEST_THREAD"])
