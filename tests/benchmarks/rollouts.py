"""Synthetic rollouts and stores for the benchmarks, framed as the store writes them: message
bodies, a rollout with snapshots, a store of one-session threads."""

from __future__ import annotations

import os
import random
import sys
import time
import uuid
import zlib
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from sessionkeeper.events import SCHEMA_VERSION  # noqa: E402
from sessionkeeper.store.codec import frame  # noqa: E402

WORDS = ["the", "payment", "rounding", "bug", "fix", "test", "passes", "refactor", "module",
         "function", "call", "tool", "result", "assistant", "user", "review", "diff", "commit",
         "branch", "session", "keeper", "store", "index", "rollout"]


def message_bodies(n: int, seed: int = 1, size: int = 500) -> list[bytes]:
    """n encoded message bodies of about `size` bytes (distinct texts, no credential shapes)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words, length = [], 0
        while length < size - 60:
            w = rng.choice(WORDS)
            words.append(w)
            length += len(w) + 1
        out.append(orjson.dumps({"type": "message", "role": ("user", "assistant")[i % 2],
                                 "text": f"{i} " + " ".join(words)}))
    return out


def now_ts() -> bytes:
    t = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"
    return stamp.encode()


def meta_body(thread: str, session: str, cwd: str) -> bytes:
    return orjson.dumps({"type": "session_meta", "schema_version": SCHEMA_VERSION,
                         "thread_id": thread, "session_id": session, "source": "startup",
                         "cwd": cwd, "permissions": {"approval_mode": "on-request"},
                         "client": {"name": "bench"}, "title": f"thread {session[:8]}"})


def write_rollout(path: Path, bodies: list[bytes], *, snapshot_every: int = 0,
                  tail: int = 0) -> int:
    """A rollout of `len(bodies)` events (+ `tail` more) framed with codec.frame; returns bytes.

    With snapshot_every, a snapshot event follows every snapshot_every-th event (seq counts it),
    carrying the size and CRC32 of the bytes before it, as the recorder writes them.
    """
    ts = now_ts()
    sid = str(uuid.uuid4())
    n_events = len(bodies)
    total, crc = 0, 0
    with open(path, "wb", buffering=1 << 20) as f:
        def put(line: bytes) -> None:
            nonlocal total, crc
            total += f.write(line)
            crc = zlib.crc32(line, crc)

        put(frame(0, ts, meta_body(str(uuid.uuid4()), sid, "/tmp/bench")))
        seq = 1
        k = len(BODY_POOL)
        for i in range(n_events + tail):
            put(frame(seq, ts, bodies[i] if i < n_events else BODY_POOL[i % k]))
            seq += 1
            if snapshot_every and i < n_events and (i + 1) % snapshot_every == 0:
                put(frame(seq, ts, snapshot_body(seq - 1, prefix=(total, crc))))
                seq += 1
    return total


def snapshot_body(through: int, *, prefix: tuple[int, int]) -> bytes:
    """A snapshot of modest size (~1.5 KB): todos, cost, model, permissions, a context summary."""
    state = {
        "subsystems": {
            "todos": {"items": [{"id": f"t{i}", "text": f"todo number {i}", "status": "pending"}
                                for i in range(8)]},
            "cost": {"input_tokens": through * 40, "output_tokens": through * 9, "usd": through / 1e3},
            "model": {"effective": "model-x", "overrides": {}},
            "permissions": {"approval_mode": "on-request", "sandbox_policy": "workspace-write"},
            "context": {"summary": {"text": "summary " * 60, "through_seq": through - 10,
                                    "seq": through - 5}, "messages": []},
        },
        "summary": {"title": "bench thread", "todos": "0/8"},
    }
    return orjson.dumps({"type": "snapshot", "through_seq": through, "state": state,
                         "prefix_bytes": prefix[0], "prefix_crc": f"{prefix[1]:08x}"})


BODY_POOL = message_bodies(64, seed=7)


def make_store(root: Path, n: int) -> None:
    """n one-session threads written straight into the store layout (meta + 3 events each)."""
    sessions = root / "sessions"
    rng = random.Random(5)
    base = time.time() - 40 * 86400
    made: set[Path] = set()
    for i in range(n):
        t = base + rng.uniform(0, 40 * 86400)
        day = sessions / time.strftime("%Y/%m/%d", time.gmtime(t))
        if day not in made:
            day.mkdir(parents=True, exist_ok=True, mode=0o700)
            made.add(day)
        ts = (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
              + f".{int(t * 1000) % 1000:03d}Z").encode()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(t)) + f"{int(t * 1000) % 1000:03d}Z"
        sid, tid = str(uuid.UUID(int=rng.getrandbits(128), version=4)), str(
            uuid.UUID(int=rng.getrandbits(128), version=4))
        data = frame(0, ts, meta_body(tid, sid, f"/home/dev/project-{i % 37}"))
        for seq in range(1, 4):
            data += frame(seq, ts, BODY_POOL[(i + seq) % len(BODY_POOL)])
        fd = os.open(day / f"rollout-{stamp}-{sid}.jsonl",
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, data)
        os.close(fd)
