"""Child process of the kill -9 test: records events until it is SIGKILLed.

    python kill9_writer.py STORE WORKSPACE SEED

Protocol on stdout (one line each, written with os.write so nothing sits in a userspace buffer):
  `R <thread_id> <session_id> <rollout path> <last seq>`  once the session is started;
then it waits for one line on stdin (the parent's "go") and records events in `written` mode:
messages of random sizes (200 B .. 300 KB of text) and operation started/committed pairs
(`begin_operation` / `finish_operation`, which are durable). After each record() has returned
it writes `A <seq>`: only then is the event acknowledged.
"""

from __future__ import annotations

import os
import random
import sys
import time

from sessionkeeper.api import Keeper

# the sizes of the peer probe (reliability.md §2 vii): large lines are the ones a kill can tear
SIZES = (200, 500, 900, 3_000, 6_000, 70_000, 300_000)
# no letters that could start a credential shape (sk-, eyJ, AKIA, AIza, bearer …): redaction's
# prefilter stays on its fast path, so timing does not depend on the text drawn
ALPHABET = "acdefghijlmnopqrtuvw 0123456789\n\u00e9"
MAX_SECONDS = 20.0  # the parent kills long before; never run away if it does not


def _out(line: str) -> None:
    os.write(1, (line + "\n").encode())


def main(store: str, workspace: str, seed: int) -> None:
    rng = random.Random(seed)
    text = "".join(rng.choice(ALPHABET) for _ in range(max(SIZES) + 1000))
    keeper = Keeper(store, durability="written")
    session = keeper.start(workspace, title="kill -9 trial")
    _out(f"R {session.thread_id} {session.session_id} {session.path} {session.writer.last_seq}")
    if not sys.stdin.readline():
        return  # the parent went away
    deadline = time.monotonic() + MAX_SECONDS
    n = 0
    while time.monotonic() < deadline:
        n += 1
        if rng.random() < 0.2:
            op = f"op-{n}"
            ticket = session.begin_operation(op, "shell", {"cmd": f"make step-{n}"})
            _out(f"A {ticket.seq}")
            ack = session.finish_operation(op, result={"exit": 0, "out": text[:rng.choice(SIZES)]})
            _out(f"A {ack.seq}")
        else:
            size = rng.choice(SIZES)
            start = rng.randrange(1000)
            ack = session.record({"type": "message", "role": rng.choice(("user", "assistant")),
                                  "text": text[start:start + size]})
            _out(f"A {ack.seq}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
