"""Child process of the rewind kill -9 test: plans and executes one rewind until it is SIGKILLed.

    python kill9_rewinder.py WORKSPACE STORE HISTORY_JSON TO_SEQ

Plans the rewind from the history (JSON) and each file's hash on disk, writes `G` on stdout
(with os.write: nothing buffered) just before `execute` starts, and `D` when it has returned.
"""

from __future__ import annotations

import json
import os
import sys

from sessionkeeper.recovery.baseline import file_hash
from sessionkeeper.recovery.rewind import execute, plan_rewind
from sessionkeeper.store.blobs import BlobStore


def main(workspace: str, store: str, history_file: str, to_seq: int) -> None:
    with open(history_file) as handle:
        history = json.load(handle)
    current = {path: file_hash(workspace, path) for path in history}
    plan = plan_rewind(history, to_seq=to_seq, current=current)
    os.write(1, b"G\n")
    execute(plan, workspace=workspace, blobs=BlobStore(store))
    os.write(1, b"D\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
