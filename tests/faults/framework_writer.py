"""Child process of the framework kill -9 tests: writes through an adapter until it is SIGKILLed.

    python framework_writer.py STORE MODE [SEED]

Modes:
- `saver`: SessionKeeperSaver.put + put_writes in a loop (values of random sizes, some above the
  inline limit, so the blob path runs too); prints `C <checkpoint_id> <n>` once put() returned
  and `W <checkpoint_id> <n>` once put_writes() returned;
- `sdk`: SessionKeeperSessionStore.append of batches of 1-4 entries; prints `A <uuid>` for each
  entry once append() returned;
- `graph` / `graph-resume`: a two-node StateGraph on the saver (durability="sync"); each node
  appends a line to SIDE_EFFECTS (fsynced) when it runs; in `graph` node 2 prints `N2` and then
  hangs (the parent kills it there); `graph-resume` continues the thread and prints `DONE <steps>`.

Everything goes to stdout with os.write, so nothing acknowledged sits in a userspace buffer.
"""

from __future__ import annotations

import operator
import os
import random
import sys
import time
import uuid
from typing import Annotated, Any, TypedDict, cast

MAX_SECONDS = 20.0  # the parent kills long before; never run away if it does not
THREAD: Any = {"configurable": {"thread_id": "kill9-thread", "checkpoint_ns": ""}}


def _out(line: str) -> None:
    os.write(1, (line + "\n").encode())


def saver_loop(store: str, seed: int) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    from sessionkeeper.integrations.langgraph import SessionKeeperSaver

    rng = random.Random(seed)
    saver = SessionKeeperSaver(store, durability="written")
    _out("R")
    if not sys.stdin.readline():
        return
    config: Any = {"configurable": dict(THREAD["configurable"])}
    version: str | None = None
    deadline = time.monotonic() + MAX_SECONDS
    n = 0
    while time.monotonic() < deadline:
        n += 1
        checkpoint = empty_checkpoint()
        version = saver.get_next_version(version)
        size = rng.choice((10, 200, 3_000, 40_000))  # 40 kB serialized is above the inline limit
        checkpoint["channel_values"] = {"n": n, "text": "x" * size}
        checkpoint["channel_versions"] = {"n": version, "text": version}
        stored = saver.put(config, checkpoint, {"source": "loop", "step": n},
                           {"n": version, "text": version})
        _out(f"C {checkpoint['id']} {n}")
        saver.put_writes(stored, [("out", f"w{n}")], task_id=f"task-{n}")
        _out(f"W {checkpoint['id']} {n}")
        config = stored


def sdk_loop(store: str, seed: int) -> None:
    from sessionkeeper.integrations.claude_sdk import SessionKeeperSessionStore

    rng = random.Random(seed)
    sdk = SessionKeeperSessionStore(store, durability="written")
    key: Any = {"project_key": "kill9-project", "session_id": "kill9-session"}
    _out("R")
    if not sys.stdin.readline():
        return
    deadline = time.monotonic() + MAX_SECONDS
    while time.monotonic() < deadline:
        batch: list[Any] = [{"type": "user", "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                  "message": {"content": "y" * rng.choice((50, 500, 5_000, 80_000))}}
                 for _ in range(rng.randint(1, 4))]
        sdk.append_sync(key, batch)
        for entry in batch:
            _out(f"A {entry['uuid']}")


class Steps(TypedDict):
    steps: Annotated[list[str], operator.add]


def graph_run(store: str, side_effects: str, *, crash: bool) -> None:
    from langgraph.graph import END, START, StateGraph

    from sessionkeeper.integrations.langgraph import SessionKeeperSaver

    def effect(name: str) -> None:
        fd = os.open(side_effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{name}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def first(state: Steps) -> dict[str, Any]:
        effect("node1")
        return {"steps": ["node1"]}

    def second(state: Steps) -> dict[str, Any]:
        effect("node2")
        if crash:
            _out("N2")
            time.sleep(MAX_SECONDS)
        return {"steps": ["node2"]}

    builder = StateGraph(Steps)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", END)
    with SessionKeeperSaver(store) as saver:
        graph = builder.compile(checkpointer=saver)
        start = cast(Steps, {"steps": []}) if crash else None
        result = graph.invoke(start, THREAD, durability="sync")
        _out(f"DONE {','.join(result['steps'])}")


if __name__ == "__main__":
    store_path, mode = sys.argv[1], sys.argv[2]
    if mode == "saver":
        saver_loop(store_path, int(sys.argv[3]))
    elif mode == "sdk":
        sdk_loop(store_path, int(sys.argv[3]))
    else:
        graph_run(store_path, sys.argv[3], crash=mode == "graph")
