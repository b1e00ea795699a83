"""OpenClaw sessions into the index, side by side with a raw parse of the same store (ratios printed).

    python tests/benchmarks/bench_openclaw.py [--sessions N] [--turns N] [--reps N]

An OpenClaw state dir is generated first: one agent store (OpenClaw's own schema and events,
from the fixture a real OpenClaw 2026.9.6 run produced, tests/unit/_openclaw.py) holding
`--sessions` windows (default 1,000) of `--turns` copies of the real run's two turns (default 3:
43 events each), in WAL mode as OpenClaw keeps it. Then:
  a  first import INTO THE INDEX (Keeper.import_agents: snapshot, list, read, translate, redact,
     rows and checkpoints written), in a fresh child process per repetition on an empty store,
     vs the raw parse: the same store opened, every event selected in (session, seq) order and
     orjson-parsed, with cwd, timestamps and usage kept per session (same child setup). Target
     <= 1.5x the raw CPU time.
  b  re-import after one event is appended to one window (in-process, the index holding every
     window): the store listed again, the window read from its checkpoint, its row written;
     5 rounds, median. Twice: the writer closed (its WAL checkpointed: what `openclaw agent
     --local` leaves), and a writer holding its WAL frames (a running Gateway; the store is then
     copied to be read without touching it). Target <= 15 ms.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parents[1]))

from tests.unit import _openclaw as oc  # noqa: E402

perf = time.perf_counter


def generate(root: Path, sessions: int, turns: int) -> dict[str, int]:
    """The state dir: one store of `sessions` windows; returns its size and event count."""
    rows = oc.fixture_rows()
    header, body = rows[0], rows[1:]
    ids = [str(uuid.UUID(int=n + 1, version=4)) for n in range(sessions)]
    db_path = oc.build(root, rows=[], session=ids[0], extra_windows=ids[1:])
    db = oc.connect(db_path)
    db.execute("PRAGMA journal_mode=WAL")
    count = 0
    for sid in ids:
        seq = 0
        batch = [(sid, 0, header["event"].replace(oc.SESSION, sid), header["created_at"])]
        for turn in range(turns):
            for row in body:
                seq += 1
                event = row["event"].replace(oc.SESSION, sid).replace('"id":"', f'"id":"{turn}-')
                batch.append((sid, seq, event, row["created_at"] + turn * 60_000))
        db.executemany("INSERT INTO transcript_events (session_id, seq, event_json, created_at) "
                       "VALUES (?, ?, ?, ?)", batch)
        count += len(batch)
    db.commit()
    db.close()
    return {"bytes": os.path.getsize(db_path), "events": count}


def child(kind: str, root: Path, store: Path) -> dict[str, Any]:
    """One measurement in this (fresh) process: the import into the index, or the raw parse."""
    if kind == "raw":
        cpu, wall = time.process_time(), perf()
        raw(oc.db_path(root))
        return {"wall_s": perf() - wall, "cpu_s": time.process_time() - cpu}
    from sessionkeeper.agents.importer import AgentSources
    from sessionkeeper.api import Keeper

    keeper = Keeper(store, agents=AgentSources(agents=("openclaw",), roots={"openclaw": (str(root),)}))
    keeper.store.index()
    cpu, wall = time.process_time(), perf()
    counts = keeper.import_agents(force=True)
    out = {"wall_s": perf() - wall, "cpu_s": time.process_time() - cpu}
    assert counts is not None and counts.unreadable == 0, counts
    out["threads"] = counts.threads
    return out


def raw(path: Path) -> dict[str, tuple[Any, ...]]:
    """The raw baseline: every event of the store parsed; cwd, first/last ts, usage per session."""
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    out: dict[str, tuple[Any, ...]] = {}
    sid = cwd = first = last = None
    tokens_in = tokens_out = 0
    for session, text in db.execute("SELECT session_id, event_json FROM transcript_events "
                                    "ORDER BY session_id, seq"):
        if session != sid:
            if sid is not None:
                out[sid] = (cwd, first, last, tokens_in, tokens_out)
            sid, cwd, first, last, tokens_in, tokens_out = session, None, None, None, 0, 0
        event = orjson.loads(text)
        cwd = event.get("cwd") or cwd
        ts = event.get("timestamp")
        if ts:
            first = first or ts
            last = ts
        message = event.get("message")
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            tokens_in += message["usage"].get("input", 0)
            tokens_out += message["usage"].get("output", 0)
    if sid is not None:
        out[sid] = (cwd, first, last, tokens_in, tokens_out)
    db.close()
    return out


def run_child(kind: str, root: Path, work: Path) -> dict[str, Any]:
    store = work / f"store-{kind}-{time.monotonic_ns()}"
    done = subprocess.run([sys.executable, __file__, "--child", kind, str(root), str(store)],
                          capture_output=True, text=True, timeout=1800, check=True)
    shutil.rmtree(store, ignore_errors=True)
    return dict(orjson.loads(done.stdout.strip().splitlines()[-1]))


def reimport(keeper: Any, root: Path, rounds: int, *, hold_wal: bool) -> list[float]:
    """Append one event to one window per round, time the listing's import of it."""
    path = oc.db_path(root)
    ids = [r[0] for r in sqlite3.connect(f"file:{path}?immutable=1", uri=True).execute(
        "SELECT session_id FROM session_windows ORDER BY session_id")]
    writer = oc.connect(path) if hold_wal else None
    if writer is not None:
        writer.execute("PRAGMA wal_autocheckpoint=0")
    out = []
    try:
        for n in range(rounds):
            sid = ids[(n * 97) % len(ids)]
            event = orjson.dumps(oc.message("user", f"again {n} {hold_wal}")).decode()
            if writer is None:
                oc.append(path, sid, event)
            else:
                last = writer.execute("SELECT max(seq) FROM transcript_events WHERE session_id = ?",
                                      (sid,)).fetchone()[0]
                oc.add(writer, {"session_id": sid, "seq": last + 1, "created_at": 1, "event": event})
                writer.commit()
            t = perf()
            counts = keeper.import_agents(force=True)
            out.append(perf() - t)
            assert counts.appended == 1 and counts.read == 0, counts
    finally:
        if writer is not None:
            writer.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=3, metavar=("KIND", "ROOT", "STORE"))
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if args.child:
        kind, root, store = args.child
        print(orjson.dumps(child(kind, Path(root), Path(store))).decode())
        return 0
    from sessionkeeper.agents.importer import AgentSources
    from sessionkeeper.api import Keeper

    with tempfile.TemporaryDirectory(prefix="skbench_openclaw_") as tmp:
        work = Path(tmp)
        root = work / "openclaw"
        t = perf()
        size = generate(root, args.sessions, args.turns)
        print(f"generated {args.sessions} OpenClaw sessions ({size['events']} events, "
              f"{size['bytes'] / 1e6:.1f} MB store) in {perf() - t:.1f} s", flush=True)
        oc.db_path(root).read_bytes()  # warm the page cache
        ours, base = [], []
        for rep in range(args.reps):
            for kind in (("ours", "raw") if rep % 2 == 0 else ("raw", "ours")):
                (ours if kind == "ours" else base).append(run_child(kind, root, work))
        assert all(x["threads"] == args.sessions for x in ours), ours
        keeper = Keeper(work / "index", agents=AgentSources(agents=("openclaw",),
                                                            roots={"openclaw": (str(root),)}))
        keeper.import_agents(force=True)
        closed = reimport(keeper, root, 5, hold_wal=False)
        held = reimport(keeper, root, 5, hold_wal=True)
    med = statistics.median
    ours_cpu, raw_cpu = med(x["cpu_s"] for x in ours), med(x["cpu_s"] for x in base)
    ours_wall, raw_wall = med(x["wall_s"] for x in ours), med(x["wall_s"] for x in base)
    rows = [
        (f"a first import of {args.sessions} sessions", f"{ours_wall:.3f} s (cpu {ours_cpu:.3f} s)",
         f"raw sqlite+orjson {raw_wall:.3f} s (cpu {raw_cpu:.3f} s)",
         f"{ours_cpu / raw_cpu:.2f}x cpu, {ours_wall / raw_wall:.2f}x wall", "<= 1.5x",
         _ok(ours_cpu / raw_cpu <= 1.5)),
        ("b re-import, 1 event appended (WAL checkpointed)", f"{med(closed) * 1e3:.1f} ms",
         f"first import {ours_wall:.3f} s", f"best {min(closed) * 1e3:.1f} ms", "<= 15 ms",
         _ok(med(closed) <= 0.015)),
        ("b re-import, 1 event appended (a writer holds WAL frames)", f"{med(held) * 1e3:.1f} ms",
         f"first import {ours_wall:.3f} s", f"best {min(held) * 1e3:.1f} ms", "<= 15 ms",
         _ok(med(held) <= 0.015)),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    print("\nOpenClaw sessions in the index (medians)")
    for r in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    return 0


def _ok(flag: bool) -> str:
    return "met" if flag else "MISSED"


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
