"""A machine continuing a thread and keeping it open: `python lease_holder.py STORE THREAD WORKSPACE`
with $SESSIONKEEPER_INDEX and $SESSIONKEEPER_MACHINE set. Prints `R <session id> <notes as JSON>`
once the thread is resumed here, or `B <message>` when another machine holds it; then holds the
session until stdin closes (or the process is killed)."""

from __future__ import annotations

import json
import os
import sys

from sessionkeeper.api import Keeper
from sessionkeeper.errors import ThreadBusy


def main() -> int:
    store, thread, workspace = sys.argv[1:4]
    keeper = Keeper(store, shared_index=os.environ["SESSIONKEEPER_INDEX"])
    try:
        report, session = keeper.resume(thread, workspace=workspace, decision="continue")
    except ThreadBusy as exc:
        print(f"B {exc}", flush=True)
        return 75
    assert session is not None, report.to_json()
    print(f"R {session.session_id} {json.dumps(report.notes)}", flush=True)
    sys.stdin.readline()
    session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
