"""Child process of the kill -9 test: records events until it is SIGKILLed.

    python kill9_writer.py STORE WORKSPACE SEED [api|writer|durable]

Protocol on stdout (one line each, written with os.write so nothing sits in a userspace buffer):
  `R <thread_id> <session_id> <rollout path> <last seq>`  once the session is started;
then it waits for one line on stdin (the parent's "go") and records events in `written` mode:
messages of random sizes (200 B .. 300 KB of text), alone or in batches of 2-4 (record_many:
one write), and operation started/committed pairs
(`begin_operation` / `finish_operation`, which are durable). After each record() has returned
it writes `A <seq>`: only then is the event acknowledged.

Mode `durable` records `durable` events from 4 threads at once (each waits for its own ack,
so fsyncs are shared by group commit): messages, batches and operations; an `A` line means the
fsync covering the record returned.

Mode `api` (default) records through Session.record/record_many (validation, redaction, state
folding: most of the time goes to CPU, so a kill seldom lands inside write()). Mode `writer`
appends pre-encoded message bodies through the session's SessionWriter (the store's hot path:
a larger share of the time is spent inside write(), so more kills tear the last line).
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time

from sessionkeeper.api import Keeper
from sessionkeeper.session.validate import event_body

# the sizes of the peer probe (reliability.md §2 vii): large lines are the ones a kill can tear
SIZES = (200, 500, 900, 3_000, 6_000, 70_000, 300_000)
# no letters that could start a credential shape (sk-, eyJ, AKIA, AIza, bearer …): redaction's
# prefilter stays on its fast path, so timing does not depend on the text drawn
WRITER_SIZES = (200, 6_000, 70_000, 300_000, 300_000)
ALPHABET = "acdefghijlmnopqrtuvw 0123456789\n\u00e9"
MAX_SECONDS = 20.0  # the parent kills long before; never run away if it does not


def _out(line: str) -> None:
    os.write(1, (line + "\n").encode())


def _message(rng: random.Random, text: str) -> dict:
    size = rng.choice(SIZES)
    start = rng.randrange(1000)
    return {"type": "message", "role": rng.choice(("user", "assistant")),
            "text": text[start:start + size]}


def _durable(session, rng: random.Random, text: str, name: str) -> None:
    """One of the durable producers: records until the parent's kill (or MAX_SECONDS)."""
    deadline = time.monotonic() + MAX_SECONDS
    n = 0
    while time.monotonic() < deadline:
        n += 1
        draw = rng.random()
        if draw < 0.2:
            op = f"{name}-op-{n}"
            ticket = session.begin_operation(op, "shell", {"cmd": f"make {op}"})
            _out(f"A {ticket.seq}")
            _out(f"A {session.finish_operation(op, result={'exit': 0}).seq}")
        elif draw < 0.4:
            for ack in session.record_many([_message(rng, text) for _ in range(3)],
                                           durability="durable"):
                _out(f"A {ack.seq}")
        else:
            _out(f"A {session.record(_message(rng, text), durability='durable').seq}")


def main(store: str, workspace: str, seed: int, mode: str) -> None:
    rng = random.Random(seed)
    text = "".join(rng.choices(ALPHABET, k=max(SIZES) + 1000))
    keeper = Keeper(store, durability="written")
    session = keeper.start(workspace, title="kill -9 trial")
    _out(f"R {session.thread_id} {session.session_id} {session.path} {session.writer.last_seq}")
    if not sys.stdin.readline():
        return  # the parent went away
    if mode == "durable":
        producers = [threading.Thread(target=_durable, daemon=True,
                                      args=(session, random.Random(seed + i), text, f"t{i}"))
                     for i in range(4)]
        for producer in producers:
            producer.start()
        for producer in producers:
            producer.join()
        return
    encoded = {size: event_body(_message(rng, text)) for size in SIZES}  # for mode "writer"
    deadline = time.monotonic() + MAX_SECONDS
    n = 0
    while time.monotonic() < deadline:
        n += 1
        draw = rng.random()
        if draw < 0.2:
            op = f"op-{n}"
            ticket = session.begin_operation(op, "shell", {"cmd": f"make step-{n}"})
            _out(f"A {ticket.seq}")
            ack = session.finish_operation(op, result={"exit": 0, "out": text[:rng.choice(SIZES)]})
            _out(f"A {ack.seq}")
        elif mode == "writer":  # mostly large lines: the ones a kill can tear
            bodies = [encoded[rng.choice(WRITER_SIZES)] for _ in range(1 if draw < 0.6 else 3)]
            for ack in session.writer.append(bodies):
                _out(f"A {ack.seq}")
        elif draw < 0.4:  # a batch: one write() of several lines, acknowledged together
            acks = session.record_many([_message(rng, text) for _ in range(rng.randint(2, 4))])
            for ack in acks:
                _out(f"A {ack.seq}")
        else:
            ack = session.record(_message(rng, text))
            _out(f"A {ack.seq}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "api")
