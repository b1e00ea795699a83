"""Several machines, one thread: one continues it at a time (the shared lease); a machine that died
holding it is taken over once its lease runs out, and the take-over is said and logged (fixtures:
`pg_url`, `repo`, tests/conftest.py; real processes as machines, real kill -9, a real server)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from tests.postgres._machines import SERVER, Machine

HOLDER = str(Path(__file__).resolve().parent / "lease_holder.py")


def _holder(machine: Machine, thread: str, workspace: Path) -> subprocess.Popen[str]:
    env = {**machine.env(), "PYTHONPATH": os.pathsep.join([SERVER, str(Path(SERVER).parent)]),
           "SESSIONKEEPER_LEASE_S": "3"}
    return subprocess.Popen([sys.executable, HOLDER, str(machine.store), thread, str(workspace)],
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _answer(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.stderr.read() if proc.stderr else ""
    return line.strip()


def _recorded(laptop: Machine, repo: Path) -> str:
    started = laptop.json("start", "--workspace", str(repo), "--title", "shared")
    laptop.record(started["session_id"], "hello")
    return str(started["thread_id"])


def test_a_thread_continued_on_one_machine_is_busy_on_another_naming_the_machine(
        pg_url: str, repo: Path, tmp_path: Path) -> None:
    """Fixture: `pg_url`, `repo`; the laptop keeps the thread open, CI tries to resume it."""
    laptop, ci = Machine("laptop", tmp_path / "l", pg_url), Machine("ci", tmp_path / "c", pg_url)
    thread = _recorded(laptop, repo)
    holder = _holder(laptop, thread, repo)
    try:
        assert _answer(holder).startswith("R ")
        busy = ci.run("resume", thread, "--workspace", str(repo), ok=(75,))
        assert "thread_busy" in busy.stderr and "laptop (pid" in busy.stderr
    finally:
        holder.communicate("\n", timeout=60)
    done = ci.json("resume", thread, "--workspace", str(repo), "--decision", "continue")
    assert done["report"]["continued"] is True  # released at close: CI may go on now


def test_two_machines_resuming_at_once_make_one_winner_and_a_dead_one_is_taken_over_after(
        pg_url: str, repo: Path, tmp_path: Path) -> None:
    """Fixture: `pg_url`, `repo`; two CI machines resume at once (3 s leases), the winner is
    killed -9, a third machine is busy until the lease runs out, then takes it over."""
    laptop = Machine("laptop", tmp_path / "l", pg_url)
    thread = _recorded(laptop, repo)
    racers = [_holder(Machine(f"ci-{n}", tmp_path / f"c{n}", pg_url), thread, repo)
              for n in (1, 2)]
    answers = [_answer(p) for p in racers]
    assert sorted(a[0] for a in answers) == ["B", "R"], answers
    winner = racers[[a[0] for a in answers].index("R")]
    loser = answers[[a[0] for a in answers].index("B")]
    assert "ci-" in loser and "pid" in loser
    os.kill(winner.pid, signal.SIGKILL)
    for proc in racers:
        proc.communicate(timeout=60)
    late = _holder(Machine("ci-3", tmp_path / "c3", pg_url), thread, repo)
    first = _answer(late)
    late.communicate(timeout=60)
    assert first.startswith("B "), first  # the dead machine's lease has not run out yet
    time.sleep(3.5)
    taker = _holder(Machine("ci-3", tmp_path / "c3", pg_url), thread, repo)
    try:
        took = _answer(taker)
        assert took.startswith("R ") and "took the thread over from" in took, took
    finally:
        taker.communicate("\n", timeout=60)
    with psycopg.connect(pg_url) as db:
        log = db.execute("SELECT event, machine, previous_machine FROM sk_lease_log WHERE "
                         "thread_id = %s ORDER BY id", (thread,)).fetchall()
    events = [e for e, _, _ in log]
    assert events.count("taken_over") == 1
    over = next(row for row in log if row[0] == "taken_over")
    assert over[1] == "ci-3" and over[2] is not None and over[2].startswith("ci-")
