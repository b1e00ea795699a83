"""A sync cut short loses nothing and doubles nothing: real `kill -9` of `sessionkeeper sync` at
random points, the server stopped in the middle of one, a wrong password and an unreachable host
(fixtures: `pg_server`, `pg_url`, `repo`, tests/conftest.py; real processes, a real server)."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import psycopg
import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.store.remote.push import lines_of
from tests.pg_server import PASSWORD, free_port
from tests.postgres._machines import Machine, password_nowhere

SESSIONS, EVENTS = 12, 150


def _recorded(store: Path, repo: Path) -> None:
    """SESSIONS threads of EVENTS messages each, recorded with no shared index."""
    keeper = Keeper(store)
    for n in range(SESSIONS):
        session = keeper.start(repo, title=f"thread {n}")
        for e in range(EVENTS):
            session.record({"type": "message", "role": "user", "text": f"t{n} e{e} " + "x" * 80})
        session.close()


def _assert_server_holds_exactly(store: Path, url: str) -> int:
    """Every line of every local rollout is on the server once, byte for byte, with its CRC, and
    every session row is shared as the store has it; returns the lines checked."""
    keeper = Keeper(store)
    local = keeper.store.session_rows()
    checked = 0
    with psycopg.connect(url) as db:
        for row in local:
            path = keeper.store.layout.resolve(row.path)
            mine = [(seq, line) for seq, line in lines_of(path.read_bytes())]
            theirs = db.execute("SELECT seq, line, crc FROM sk_records WHERE session_id = %s "
                                "ORDER BY seq", (row.session_id,)).fetchall()
            assert [(s, bytes(b)) for s, b, _ in theirs] == mine
            assert all(zlib.crc32(bytes(b)) == c for _, b, c in theirs)
            checked += len(mine)
        total = db.execute("SELECT count(*) FROM sk_records").fetchone()
        assert total is not None and total[0] == checked  # nothing doubled, nothing foreign
        shared = db.execute("SELECT count(*) FROM sk_index5_sessions").fetchone()
        assert shared is not None and shared[0] == len(local)
    return checked


def _records(db: psycopg.Connection) -> int | None:  # type: ignore[type-arg]
    """The lines the server holds (None: no sync created its tables yet)."""
    found = db.execute("SELECT to_regclass('sk_records') IS NOT NULL").fetchone()
    if not (found and found[0]):
        return None
    count = db.execute("SELECT count(*) FROM sk_records").fetchone()
    return int(count[0]) if count else 0


def _slowed_sync(machine: Machine) -> subprocess.Popen[str]:
    """`sessionkeeper sync` under strace, every send to the server held 20 ms (so kills land
    inside it at any load)."""
    strace = shutil.which("strace")
    if strace is None:
        message = "strace is not installed (tests/faults/install-fault-tools.sh)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return subprocess.Popen([strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=sendto",
                             "-e", "inject=sendto:delay_exit=20000", sys.executable, "-m",
                             "sessionkeeper", "sync"], env=machine.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _kill_traced(tracer: int) -> bool:
    """kill -9 the process strace runs (its children now); True when one was killed."""
    killed = False
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{tracer}/task").iterdir():
            for child in (task / "children").read_text().split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(child), signal.SIGKILL)
                    killed = True
    return killed


@pytest.mark.slow
def test_a_sync_killed_at_random_points_loses_and_doubles_nothing(pg_url: str, repo: Path,
                                                                  tmp_path: Path) -> None:
    """Fixture: `pg_url`, `repo`; 12 sessions of 150 records, `sync` (each send to the server held
    20 ms by strace) killed -9 once the server holds each of five random counts of lines (fixed
    seed) and once at a random moment after it connected, then run to its end."""
    laptop = Machine("laptop", tmp_path / "store", pg_url)
    _recorded(laptop.store, repo)
    rng = random.Random(20260529)
    keeper = Keeper(laptop.store)
    total = sum(len(list(lines_of(keeper.store.layout.resolve(r.path).read_bytes())))
                for r in keeper.store.session_rows())
    targets = sorted(rng.sample(range(1, total), 5))
    kills, seen = 0, []
    with psycopg.connect(pg_url, autocommit=True) as watch:
        for target in [*targets, None]:  # the last: killed at a random moment once it sent lines
            before = _records(watch) or 0
            proc = _slowed_sync(laptop)
            deadline = time.monotonic() + 120
            while proc.poll() is None and time.monotonic() < deadline:
                count = _records(watch) or 0
                if count > before and (target is None or count >= target):
                    if target is None:
                        time.sleep(rng.uniform(0.0, 0.5))
                    break
                time.sleep(0.005)
            while proc.poll() is None and not _kill_traced(proc.pid):
                time.sleep(0.005)
            proc.communicate(timeout=60)
            kills += proc.returncode == -signal.SIGKILL
            seen.append(_records(watch))
    assert kills >= 5, f"the sync ended before most kills ({seen}): the trial tests too little"
    assert sum(1 for n in seen if n is not None and 0 < n < total) >= 3, (seen, total)
    laptop.run("sync")
    assert _assert_server_holds_exactly(laptop.store, pg_url) >= SESSIONS * EVENTS
    again = laptop.json("sync")
    assert (again["records"], again["sessions"], again["unchanged"]) == (0, 0, SESSIONS)


@pytest.mark.slow
def test_the_server_stopped_mid_sync_leaves_the_store_working_and_sync_catches_up(
        pg_server, pg_url: str, repo: Path, tmp_path: Path) -> None:
    """Fixture: `pg_server` stopped while `sync` runs on `pg_url`; the laptop works on, then the
    server comes back and a sync completes; CI then sees every thread."""
    laptop, ci = Machine("laptop", tmp_path / "laptop", pg_url), Machine("ci", tmp_path / "ci",
                                                                         pg_url)
    _recorded(laptop.store, repo)
    proc = _slowed_sync(laptop)
    with psycopg.connect(pg_url, autocommit=True) as watch:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if (_records(watch) or 0) > 0:
                break
            time.sleep(0.005)
        held = _records(watch) or 0
    pg_server.stop(mode="immediate")
    try:
        out, err = proc.communicate(timeout=60)
        laptop.outputs += [out, err]
        assert proc.returncode == 70 and "shared index" in err, (proc.returncode, err[-500:])
        assert 0 < held < SESSIONS * EVENTS  # stopped in the middle of it
        started = laptop.json("start", "--workspace", str(repo), "--title", "offline")
        laptop.record(started["session_id"], "still recording")
        assert started["thread_id"] in {t["thread_id"] for t in laptop.json("list",
                                                                               "--limit", "50")}
        failed = laptop.run("sync", ok=(70,))
        assert failed.stderr.count("unreachable") == 1 and PASSWORD not in failed.stderr
    finally:
        pg_server.start()
    laptop.run("sync")
    assert _assert_server_holds_exactly(laptop.store, pg_url) >= SESSIONS * EVENTS + 2
    assert len(ci.json("list", "--limit", "50")) == SESSIONS + 1
    password_nowhere([laptop, ci])


def test_a_wrong_password_or_an_unreachable_host_is_one_clear_error_and_local_work_goes_on(
        pg_server, repo: Path, tmp_path: Path) -> None:
    """Fixture: `pg_server`; one machine with a wrong password, one pointed at a closed port."""
    wrong = Machine("laptop", tmp_path / "a", pg_server.url(password="not-" + PASSWORD[::-1]))
    gone = Machine("laptop", tmp_path / "b", pg_server.url(port=free_port()))
    for machine, says in ((wrong, "password authentication failed"), (gone, "unreachable")):
        started = machine.json("start", "--workspace", str(repo))
        machine.record(started["session_id"], "works offline")
        listed = machine.run("list", "--json")
        assert listed.stderr.count(says) == 1, listed.stderr  # said once, then local answers
        assert machine.json("show", started["thread_id"])["sessions"]
        failed = machine.run("sync", ok=(70,))
        assert says in failed.stderr and len(failed.stderr.strip().splitlines()) == 1
        assert ("not-" + PASSWORD[::-1]) not in failed.stderr
        password_nowhere([machine])
