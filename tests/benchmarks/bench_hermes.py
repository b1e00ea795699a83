"""Hermes Agent sessions into the index, side by side with a raw SQLite parse, one run (ratios printed).

    python tests/benchmarks/bench_hermes.py [--sessions N] [--reps N]

A Hermes home is generated from the state.db the real Hermes 0.19.0 wrote (fixtures/agents/
hermes/real/: its schema, triggers and FTS tables, and the rows of its terminal session as the
pattern): N sessions (default 1,000) of 12 messages each (a prompt, a tool call and its result,
an answer, three times), inserted through SQL so Hermes's own FTS triggers run. Then:
  a  first import INTO THE INDEX (Keeper.import_agents: snapshot, listing query, each session
     read, translated, redacted, rows and checkpoints written), in a fresh child process per
     repetition on an empty store, vs the raw parse of the same database (same child setup: the
     database opened read-only, every session and message row fetched in session order, every
     tool_calls / tool result JSON parsed with orjson); wall and CPU time. Target <= 1.5x.
  b  re-import after one message is committed to one session's WAL (in-process, the index holds
     every session): the snapshot refreshed, the listing query, the one session read from its
     checkpoint, its row and checkpoint written; 5 rounds, median. Target <= 15 ms.
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
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parents[1]))

REAL = HERE.parents[1] / "fixtures" / "agents" / "hermes" / "real" / "state.db"
perf = time.perf_counter


def generate(root: Path, sessions: int) -> dict[str, int]:
    """A Hermes home of `sessions` terminal sessions patterned on the recorded one."""
    root.mkdir(parents=True)
    db_path = root / "state.db"
    shutil.copyfile(REAL, db_path)
    db = sqlite3.connect(db_path)
    db.row_factory = sqlite3.Row
    [pattern] = db.execute("SELECT * FROM sessions WHERE source = 'cli'").fetchall()
    rows = db.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY id", (pattern["id"],)).fetchall()
    db.execute("DELETE FROM messages")
    db.execute("DELETE FROM session_model_usage")
    db.execute("DELETE FROM sessions")
    s_cols = list(pattern.keys())  # a sqlite3.Row: keys() lists its columns
    m_cols = [k for k in rows[0].keys() if k != "id"]  # noqa: SIM118 - a sqlite3.Row: keys() is its only listing
    base = time.time() - sessions * 60
    messages = 0
    for n in range(sessions):
        sid = f"20261101_{n:06d}_{n:06x}"
        session = dict(pattern)
        session.update(id=sid, started_at=base + n * 60, title=f"task {n}: fix the payment rounding",
                       cwd=f"/work/repo-{n % 20}", message_count=12)
        db.execute(f"INSERT INTO sessions ({', '.join(s_cols)}) VALUES ({', '.join('?' * len(s_cols))})",
                   [session[c] for c in s_cols])
        for k in range(12):
            row = dict(rows[k % len(rows)])
            row.update(session_id=sid, timestamp=base + n * 60 + k)
            if row["tool_calls"]:
                row["tool_calls"] = row["tool_calls"].replace("toolu_", f"toolu_{n}_{k}_")
            if row["tool_call_id"]:
                row["tool_call_id"] = f"{row['tool_call_id'].replace('toolu_', f'toolu_{n}_{k - 1}_')}"
            db.execute(f"INSERT INTO messages ({', '.join(m_cols)}) VALUES ({', '.join('?' * len(m_cols))})",
                       [row[c] for c in m_cols])
            messages += 1
    db.commit()
    db.execute("VACUUM")
    db.execute("PRAGMA journal_mode=WAL")  # as Hermes keeps it
    db.close()
    return {"sessions": sessions, "messages": messages, "bytes": db_path.stat().st_size}


def raw_parse(root: Path) -> dict[str, Any]:
    """The baseline: every session and message row of the database fetched, its JSON parsed."""
    db = sqlite3.connect(f"file:{root / 'state.db'}?mode=ro", uri=True)
    count = 0
    for (sid,) in db.execute("SELECT id FROM sessions ORDER BY id").fetchall():
        db.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone()
        for row in db.execute("SELECT id, role, content, tool_call_id, tool_calls, tool_name, "
                              "timestamp, active, compacted FROM messages WHERE session_id = ? "
                              "ORDER BY id", (sid,)):
            if row[4]:
                orjson.loads(row[4])
            if row[1] == "tool" and row[2] and row[2][:1] == "{":
                orjson.loads(row[2])
            count += 1
    db.close()
    return {"rows": count}


def _sources(root: Path) -> Any:
    from sessionkeeper.agents.importer import AgentSources

    return AgentSources(agents=("hermes",), roots={"hermes": (str(root),)})


def child(kind: str, root: Path, store: Path) -> dict[str, Any]:
    """One measurement in this (fresh) process: the import into the index, or the raw parse."""
    if kind == "raw":
        cpu, wall = time.process_time(), perf()
        raw_parse(root)
        return {"wall_s": perf() - wall, "cpu_s": time.process_time() - cpu}
    from sessionkeeper.api import Keeper

    keeper = Keeper(store, agents=_sources(root))
    keeper.store.index()  # the store exists before the clock starts (as in the product)
    cpu, wall = time.process_time(), perf()
    counts = keeper.import_agents(force=True)
    out = {"wall_s": perf() - wall, "cpu_s": time.process_time() - cpu}
    assert counts is not None and counts.unreadable == 0, counts
    out["threads"] = counts.threads
    return out


def run_child(kind: str, root: Path, work: Path) -> dict[str, Any]:
    """One measurement in a fresh process."""
    store = work / f"store-{kind}-{time.monotonic_ns()}"
    done = subprocess.run([sys.executable, __file__, "--child", kind, str(root), str(store)],
                          capture_output=True, text=True, timeout=1800, check=True)
    shutil.rmtree(store, ignore_errors=True)
    return orjson.loads(done.stdout.strip().splitlines()[-1])


def reimport(keeper: Any, root: Path, rounds: int, sessions: int) -> list[float]:
    """Append one message to one session per round (one writer connection kept open, as Hermes
    keeps its own: commits go to the WAL, no checkpoint meanwhile); time the listing's import."""
    out: list[float] = []
    db = sqlite3.connect(root / "state.db")
    db.execute("PRAGMA wal_autocheckpoint=0")
    for n in range(rounds):
        sid = f"20261101_{(n * 397) % sessions:06d}_{(n * 397) % sessions:06x}"
        db.execute("INSERT INTO messages (session_id, role, content, timestamp, active) "
                   "VALUES (?, 'user', ?, ?, 1)", (sid, f"and once more {n}", time.time()))
        db.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?", (sid,))
        db.commit()
        t = perf()
        counts = keeper.import_agents(force=True)
        out.append(perf() - t)
        assert counts.appended == 1 and counts.read == 0, counts
    db.close()
    return out


def main() -> int:
    """Generate, measure, print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=3, metavar=("KIND", "ROOT", "STORE"))
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if args.child:
        kind, root, store = args.child
        print(orjson.dumps(child(kind, Path(root), Path(store))).decode())
        return 0
    from sessionkeeper.api import Keeper

    with tempfile.TemporaryDirectory(prefix="skbench_hermes_") as tmp:
        work = Path(tmp)
        root = work / "hermes"
        t = perf()
        size = generate(root, args.sessions)
        print(f"generated {size['sessions']} sessions ({size['messages']} messages, "
              f"{size['bytes'] / 1e6:.1f} MB state.db) in {perf() - t:.1f} s", flush=True)
        ours, raw = [], []
        for rep in range(args.reps):
            for kind in (("ours", "raw") if rep % 2 == 0 else ("raw", "ours")):
                (ours if kind == "ours" else raw).append(run_child(kind, root, work))
        assert all(o["threads"] == args.sessions for o in ours), ours
        keeper = Keeper(work / "store", agents=_sources(root))
        keeper.import_agents(force=True)
        again = reimport(keeper, root, 5, args.sessions)
    med = statistics.median
    ours_wall, raw_wall = med(x["wall_s"] for x in ours), med(x["wall_s"] for x in raw)
    ours_cpu, raw_cpu = med(x["cpu_s"] for x in ours), med(x["cpu_s"] for x in raw)
    rows = [
        (f"a first import of {args.sessions} Hermes sessions", f"{ours_wall:.3f} s (cpu {ours_cpu:.3f} s)",
         f"raw sqlite+orjson {raw_wall:.3f} s (cpu {raw_cpu:.3f} s)",
         f"{ours_cpu / raw_cpu:.2f}x cpu, {ours_wall / raw_wall:.2f}x wall", "<= 1.5x",
         "met" if ours_cpu / raw_cpu <= 1.5 else "MISSED"),
        ("b re-import, 1 message appended", f"{med(again) * 1e3:.1f} ms (best {min(again) * 1e3:.1f})",
         f"first import {ours_wall:.3f} s", f"{ours_wall / med(again):.0f}x faster", "<= 15 ms",
         "met" if med(again) <= 0.015 else "MISSED"),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    print("\nHermes Agent sessions in the index (medians)")
    for r in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
