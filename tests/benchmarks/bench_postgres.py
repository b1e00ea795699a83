"""The shared index on PostgreSQL, side by side with the server's own tools on the same data.

    python tests/benchmarks/bench_postgres.py [--quick] [--reps N] [--json OUT.json]

Cases (issue 29, "Benchmarks"), on a real server started for the run (tests/pg_server.py: initdb
and pg_ctl on a temporary directory, a loopback port):
  a  the picker's first page (50 threads) of a store's partition holding 100k threads:
     PostgresIndex.list_threads (the query, the rows decoded into ThreadRows) vs the very same
     SQL run by psql with \\timing (its own client's time for the statement; each repetition one
     psql on a warm connection: the best of its last 4 runs; ours the best of 4 calls) — target
     <= 1.5x. Beside it (reported): psycopg alone running the same statement into plain tuples,
     the floor of any Python client.
     Beside it (reported): the team's view across partitions (Shared.threads: newest rows by
     an index scan, each checked to be its thread's newest) vs psql running the one-statement
     way of asking the same (DISTINCT ON over every partition).
  b  pushing a 10k-event session: push() (the rollout read and split into lines, each line's
     CRC-32, what the server holds asked first, one COPY, the session's row, the blob scan) vs a
     COPY of the same lines with their seq and CRC computed beforehand into a table of the same
     shape — target <= 2x.

The SQL given to psql is what psycopg sent, captured from the call and rendered with its
parameters (ClientCursor.mogrify): the same statement, not a copy of it. Figures are medians over
repetitions; subject and baseline alternate, the order flipping each time.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parents[1]))

from tests.benchmarks._bench import Row, alternate, loadavg, median, ms, print_table, row  # noqa: E402

perf = time.perf_counter
THREADS = 100_000
EVENTS = 10_000


def _rows(n: int) -> list[Any]:
    from sessionkeeper.store.index import SessionRow

    return [SessionRow(session_id=f"{i:08x}-0000-4000-8000-000000000000",
                       thread_id=f"{i:08x}-1111-4000-8000-000000000000",
                       path=f"sessions/2026/01/01/rollout-x-{i:08x}.jsonl", cwd=f"/repo/{i % 40}",
                       branch="main", title=f"thread {i}", machine=f"m{i % 7}", os_user="ana",
                       started_at=f"2026-01-01T00:00:{i % 60:02d}.000Z",
                       last_activity=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00."
                                     f"{i % 1000:03d}Z", last_seq=i % 50, event_count=i % 50,
                       summary={"title": f"thread {i}", "todos": {"done": 1, "total": 3}})
            for i in range(n)]


def _captured(db: Any, call: Any) -> tuple[Any, str]:
    """Run `call()` and return its result with the last statement it sent, rendered."""
    import psycopg

    seen: list[tuple[Any, Any]] = []

    class Spy(psycopg.Cursor):  # type: ignore[type-arg]
        def execute(self, query: Any, params: Any = None, **kw: Any) -> Any:
            seen.append((query, params))
            return super().execute(query, params, **kw)

    real = db.cursor_factory
    db.cursor_factory = Spy
    try:
        result = call()
    finally:
        db.cursor_factory = real
    query, params = seen[-1]
    return result, psycopg.ClientCursor(db).mogrify(query, params)


def _psql(url: str, sql: str, reps: int) -> list[float]:
    """psql's own \\timing of `sql`, run `reps` times in one psql (its output discarded)."""
    psql = shutil.which("psql") or "psql"
    script = "\\timing on\n\\o /dev/null\n" + (sql.rstrip(";") + ";\n") * reps
    done = subprocess.run([psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", url], input=script,
                          capture_output=True, text=True, timeout=600, check=True)
    times = [float(t) / 1000 for t in re.findall(r"Time: ([0-9.]+) ms", done.stdout)]
    assert len(times) == reps, done.stdout[-500:]
    return times


def picker(url: str, reps: int) -> list[Row]:
    """Case a: the first page of 100k threads, ours vs psql's."""
    from sessionkeeper.store.index import ListQuery
    from sessionkeeper.store.index.postgres import PostgresBackend
    from sessionkeeper.store.remote.shared import Shared

    t0 = perf()
    index = PostgresBackend(url, store_id="bench").build(_rows(THREADS))
    index.db.execute("ANALYZE")
    print(f"  built a partition of {THREADS:,} threads in {ms(perf() - t0)}")
    query = ListQuery(limit=50)
    page, sql = _captured(index.db, lambda: index.list_threads(query))
    assert len(page) == 50
    shared = Shared(url, store_id="bench")
    team = shared.threads(query)
    assert [t.thread_id for t in team] == [t.thread_id for t in page]
    team_sql = ("SELECT * FROM (SELECT DISTINCT ON (thread_id) * FROM sk_index5_threads WHERE "
                "imported = 0 ORDER BY thread_id, last_activity DESC NULLS LAST) t WHERE "
                "archived = 0 ORDER BY last_activity DESC NULLS LAST, thread_id DESC LIMIT 50")
    for _ in range(3):  # warm both sides
        index.list_threads(query)
    _psql(url, sql, 3)
    raw_sql, raw_args = sql, None  # the rendered statement, fetched as plain tuples

    def raw() -> float:
        return min(_timed(lambda: index.db.execute(raw_sql, raw_args, prepare=True).fetchall())
                   for _ in range(4))

    times = alternate(reps, {"ours": lambda: min(_timed(lambda: index.list_threads(query))
                                                 for _ in range(4)),
                             "raw": raw,
                             "psql": lambda: min(_psql(url, sql, 5)[1:]),
                             "team": lambda: _timed(lambda: shared.threads(query)),
                             "team psql": lambda: min(_psql(url, team_sql, 3)[1:])})
    a, b = median(times["ours"]), median(times["psql"])
    c, d = median(times["team"]), median(times["team psql"])
    e = median(times["raw"])
    return [row("a picker page (50 of 100k threads)", ms(a), f"psql {ms(b)}", a / b,
                target="<= 1.5x", met=a / b <= 1.5),
            row("a  psycopg alone (same statement, tuples)", ms(e), f"psql {ms(b)}", e / b,
                target="reported", met=None),
            row("a  the team's view (every store's partition)", ms(c),
                f"psql DISTINCT ON {ms(d)}", c / d, target="reported", met=None)]


def _timed(call: Any) -> float:
    t0 = perf()
    call()
    return perf() - t0


def sync(url: str, reps: int, scratch: Path) -> list[Row]:
    """Case b: pushing a 10k-event session vs COPY of its lines."""
    import psycopg

    from sessionkeeper.api import Keeper
    from sessionkeeper.store.remote.push import lines_of, push
    from sessionkeeper.store.remote.shared import Shared
    from tests.conftest import init_repo

    repo = init_repo(scratch / "repo", {"a.py": "x = 1\n"})
    keeper = Keeper(scratch / "store", durability="none")
    session = keeper.start(repo, title="long")
    for n in range(EVENTS - 3):
        session.record({"type": "message", "role": "user" if n % 2 else "assistant",
                        "text": f"message {n}: " + "lorem ipsum dolor sit amet " * 4})
    session.close()
    [only] = keeper.store.session_rows()
    path = keeper.store.layout.resolve(only.path)
    data = path.read_bytes()
    lines = [(seq, line) for seq, line in lines_of(data)]
    print(f"  a session of {len(lines):,} lines, {len(data) / 1e6:.1f} MB")
    prepared = [(only.session_id, seq, only.thread_id, line, zlib.crc32(line))
                for seq, line in lines]
    db = psycopg.connect(url, autocommit=True)
    db.execute("CREATE TABLE bench_copy(session_id text COLLATE \"C\" NOT NULL, seq bigint NOT NULL,"
               " thread_id text COLLATE \"C\" NOT NULL, line bytea NOT NULL, crc bigint NOT NULL,"
               " PRIMARY KEY(session_id, seq))")
    shared = Shared(url, store_id="sync-bench")
    shared.partition()

    def ours() -> float:
        shared.db.execute("TRUNCATE sk_records")
        shared.db.execute("DELETE FROM sk_index5_sessions WHERE store_id = 'sync-bench'")
        t0 = perf()
        report = push(keeper.store, shared)
        took = perf() - t0
        assert report.records == len(lines), report
        return took

    def baseline() -> float:
        db.execute("TRUNCATE bench_copy")
        t0 = perf()
        with db.transaction(), db.cursor() as cur, cur.copy(
                "COPY bench_copy(session_id, seq, thread_id, line, crc) FROM STDIN") as copy:
            for values in prepared:
                copy.write_row(values)
        return perf() - t0

    ours()
    baseline()
    times = alternate(reps, {"ours": ours, "copy": baseline})
    a, b = median(times["ours"]), median(times["copy"])
    db.close()
    shared.close()
    return [row(f"b push a {EVENTS // 1000}k-event session", ms(a), f"COPY {ms(b)}", a / b,
                target="<= 2x", met=a / b <= 2)]


def main(argv: list[str] | None = None) -> int:
    """Run the cases; exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    reps = args.reps or (5 if args.quick else 21)
    from tests.pg_server import PgServer

    print(f"bench_postgres: load {loadavg()}, {reps} repetitions")
    server = PgServer()
    scratch = Path(tempfile.mkdtemp(prefix="sk-bench-pg-"))
    try:
        server.sql("CREATE DATABASE bench")
        url = server.url(dbname="bench")
        rows = picker(url, reps) + sync(url, max(3, reps // 3), scratch)
    finally:
        server.close()
        shutil.rmtree(scratch, ignore_errors=True)
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps([list(r) for r in rows], indent=2))
    return 1 if any(r[5] == "MISS" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
