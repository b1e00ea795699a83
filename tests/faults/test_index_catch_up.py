"""The index catches up by itself: a foreign write lock, a crash between file and row, empty files."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from sessionkeeper.api import Keeper

from .conftest import Child, unavailable


def cli(store: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """The real CLI against `store` (the default-store behaviour: it may update the index)."""
    return subprocess.run([sys.executable, "-m", "sessionkeeper", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "NO_COLOR": "1",
                                                           "SESSIONKEEPER_HOME": str(store)})


def test_a_foreign_write_lock_on_the_index_neither_stalls_start_nor_loses_the_thread(
        store_dir: Path, repo: Path) -> None:
    """Fixture: `repo`; another process holds a write transaction on state.db meanwhile."""
    Keeper(store_dir).start(repo, title="before").close()
    holder = sqlite3.connect(store_dir / "state.db", timeout=0)
    holder.execute("BEGIN IMMEDIATE")  # a foreign writer (a sqlite3 shell, a backup tool)
    try:
        started = cli(store_dir, "start", "--workspace", str(repo), "--title", "during", "--json",
                      timeout=20)  # a timeout, not a speed assertion: it used to hang ~21 s
        assert started.returncode == 0, started.stderr
        listed = orjson.loads(cli(store_dir, "list", "--json").stdout)  # answered while locked
        assert {t["title"] for t in listed} == {"before", "during"}
    finally:
        holder.rollback()
        holder.close()
    assert sorted(r.title or "" for r in Keeper(store_dir).rows()) == ["before", "during"]
    assert os.listdir(store_dir / "pending") == []  # caught up: no marker left


def test_sessions_whose_row_never_reached_the_index_are_listed_after_a_kill(store_dir, repo):
    """Fixture: 12 real SIGKILLs of a process that forks a thread again and again."""
    base = Keeper(store_dir).start(repo, title="base")
    base.close()
    script = ("import sys; from sessionkeeper.api import Keeper\n"
              "k = Keeper(sys.argv[1])\n"
              "while True:\n    k.fork(sys.argv[2]).close()\n")
    for trial in range(12):
        child = subprocess.Popen([sys.executable, "-c", script, str(store_dir), base.thread_id])
        time.sleep(0.3 + 0.05 * trial)
        child.send_signal(signal.SIGKILL)
        child.wait()
    keeper = Keeper(store_dir)
    listed = {r.thread_id for r in keeper.rows(include_archived=True, limit=1000)}
    on_disk = set()
    for path in (store_dir / "sessions").rglob("rollout-*.jsonl"):
        first = path.read_bytes().split(b"\n", 1)[0]
        if first.endswith(b"}"):
            on_disk.add(orjson.loads(first)["thread_id"])
    assert on_disk <= listed  # every fork whose first line is on disk is listed
    report = keeper.fsck(repair=True)
    again = keeper.fsck(repair=False)
    assert again.clean, again
    assert all(q.reason.startswith("empty rollout") or q.bytes for q in report.quarantined)


def test_fsck_repair_sets_an_empty_rollout_aside(store_dir, repo):
    """Fixture: a 0-byte rollout with its pending marker, as a crash before the first line leaves."""
    keeper = Keeper(store_dir)
    keeper.start(repo).close()
    day = next((store_dir / "sessions").rglob("rollout-*.jsonl")).parent
    empty = day / "rollout-20261201T000000000Z-00000000-0000-4000-8000-00000000abcd.jsonl"
    empty.touch()
    (store_dir / "pending" / "00000000-0000-4000-8000-00000000abcd").write_text(
        str(empty.relative_to(store_dir)))
    assert not keeper.fsck(repair=False).clean
    report = keeper.fsck(repair=True)
    assert [q.reason.split(" ")[0] for q in report.quarantined] == ["empty"]
    assert not empty.exists() and (store_dir / "quarantine" / f"{empty.name}.empty").exists()
    assert keeper.fsck(repair=False).clean and os.listdir(store_dir / "pending") == []


def test_fsck_repair_never_sets_aside_the_rollout_of_a_session_being_started(store_dir, repo):
    """Fixture: a fault_child starting a session under strace with every fsync delayed by 1 s, so
    its new rollout stays empty for a second; `fsck --repair` runs in this process meanwhile."""
    strace = shutil.which("strace")
    if strace is None:
        unavailable("no strace (Debian package strace) to delay the child's fsyncs")
    keeper = Keeper(store_dir)
    keeper.start(repo, title="first").close()
    before = set((store_dir / "sessions").rglob("rollout-*.jsonl"))
    keeper.fsck(repair=False)  # warm: what runs during the window is the check itself
    child = Child(store_dir, repo, prefix=(strace, "-f", "-qq", "-o", "/dev/null", "-e",
                                           "trace=fsync,fdatasync", "-e",
                                           "inject=fsync,fdatasync:delay_enter=1000000"))
    try:
        assert child.proc.stdin is not None
        child.proc.stdin.write(b"start\n")
        child.proc.stdin.flush()
        deadline = time.monotonic() + 60
        while not [p for p in (store_dir / "sessions").rglob("rollout-*.jsonl")
                   if p not in before and p.stat().st_size == 0]:
            assert time.monotonic() < deadline, f"no empty rollout appeared: {child.stderr()}"
            time.sleep(0.005)
        keeper.fsck(repair=True)  # while the child's rollout is created and not yet written
        reply = child.read(timeout=60, after="start")
        assert reply.startswith("R "), reply
        thread, _session, path = reply.split()[1:]
        assert child.ask("record written m1 100").startswith("A ")
        assert child.ask("close") == "C"
    finally:
        child.close()
    assert Path(path).exists(), "the rollout of an acknowledged start was moved away"
    assert not list((store_dir / "quarantine").glob("*.empty"))
    assert Keeper(store_dir).check_resume(thread, workspace=str(repo)).verdict == "ok"


def _list_at_once(store: str, barrier: Any) -> list[str]:
    """One process: wait for the others, then open the store and list it."""
    barrier.wait()
    return sorted(row.thread_id for row in Keeper(store).rows())


def test_processes_opening_a_store_without_index_at_once_build_it_once_and_all_answer(
        store_dir: Path, repo: Path) -> None:
    """Fixture: `repo`; three threads recorded, state.db removed; six real processes list at once."""
    made = []
    for title in ("a", "b", "c"):
        with Keeper(store_dir).start(repo, title=title) as session:
            made.append(session.thread_id)
    for part in store_dir.glob("state.db*"):
        part.unlink()
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Manager().Barrier(6)
    with ctx.Pool(6) as pool:
        answers = pool.starmap(_list_at_once, [(str(store_dir), barrier)] * 6)
    assert answers == [sorted(made)] * 6
    assert not list(store_dir.glob("state.db.corrupt-*"))  # nobody set another's index aside


def _copies(store: Path, repo: Path, count: int) -> None:
    """`count` rollouts of distinct threads: one recorded session, re-framed under new ids."""
    import uuid

    from sessionkeeper.store.codec import frame, unframe

    session = Keeper(store).start(repo, title="many")
    session.record({"type": "message", "role": "user", "text": "one"})
    session.close()
    first, rest = Path(session.path).read_bytes().split(b"\n", 1)
    meta = unframe(first)
    day = Path(session.path).parent
    for _ in range(count):
        sid = str(uuid.uuid4())
        body = {k: v for k, v in meta.items() if k not in ("seq", "ts")}
        body.update(session_id=sid, thread_id=str(uuid.uuid4()))
        line = frame(meta["seq"], meta["ts"].encode(), orjson.dumps(body))
        (day / f"rollout-20261201T000000000Z-{sid}.jsonl").write_bytes(line + rest)


def _stopped(pid: int) -> None:
    """Wait until process `pid` is stopped (SIGSTOP delivered: its state in /proc is T)."""
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("T", "t"):
        assert time.monotonic() < deadline
        time.sleep(0.001)


def _rebuild_stopped_mid_write(store_dir: Path) -> subprocess.Popen[bytes]:
    """`sessionkeeper reindex` in a real process, stopped (SIGSTOP) while its temporary index
    exists: the rename that ends a build has not happened. A build that ends between our look
    and the stop is run again (it never ends the test's run as a pass)."""
    for _ in range(5):
        for built in store_dir.glob("state.db*"):
            built.unlink()
        child = subprocess.Popen([sys.executable, "-m", "sessionkeeper", "reindex"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 env={**os.environ, "SESSIONKEEPER_HOME": str(store_dir)})
        deadline = time.monotonic() + 60
        while not list(store_dir.glob(".state.db.rebuild-*")) and child.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.0002)
        if child.poll() is None:
            child.send_signal(signal.SIGSTOP)
            _stopped(child.pid)
            if list(store_dir.glob(".state.db.rebuild-*")):
                return child
            child.kill()
        child.wait(timeout=60)
    raise AssertionError("the rebuild ended before it could be stopped, 5 times")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_a_rebuild_interrupted_while_writing_leaves_no_temporary_index_behind(store_dir, repo,
                                                                             sig):
    """Fixture: 3,000 rollouts and no index; `sessionkeeper reindex` in a real process gets Ctrl-C
    (SIGINT) or kill -9 while it writes the new index to its temporary file (it is stopped there
    first, so the signal always lands mid-write); then a listing."""
    _copies(store_dir, repo, 3000)
    child = _rebuild_stopped_mid_write(store_dir)
    child.send_signal(sig)
    child.send_signal(signal.SIGCONT)
    child.wait(timeout=60)
    assert child.returncode != 0, "the rebuild finished after the signal"
    if sig == signal.SIGINT:  # the process itself cleans up
        assert not list(store_dir.glob(".state.db.rebuild-*")), "a temporary index was left"
    assert len(Keeper(store_dir).rows(limit=1000)) == 1000  # the next process builds it whole
    assert not list(store_dir.glob(".state.db.rebuild-*")), "a dead build's index was left"
