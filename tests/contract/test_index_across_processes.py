"""The index shared by several processes: rebuilds, connections and clocks never hide a session."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import IndexBusy
from sessionkeeper.session.live import Session
from sessionkeeper.store.index import ListQuery
from sessionkeeper.store.store import Store

from ..seed import redate

SERVER = str(Path(__file__).resolve().parents[2] / "server")


def child_env() -> dict[str, str]:
    """The environment of a child process: this checkout's server first on the path."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([SERVER, os.environ.get("PYTHONPATH", "")])}


def cli(store: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """The real CLI in another process."""
    return subprocess.run([sys.executable, "-m", "sessionkeeper", *args, "--store", str(store)],
                          capture_output=True, text=True, env=child_env(), timeout=60, check=check)


def test_two_keepers_in_one_process_keep_sqlite_locking_intact(store_dir, repo):
    """Fixture: two Keepers on one store in this process, another process listing."""
    first, second = Keeper(store_dir), Keeper(store_dir)
    first.start(repo, title="first").close()
    second.rows()  # a second connection in this process: must not drop the first one's locks
    assert [t["title"] for t in orjson.loads(cli(store_dir, "list", "--json").stdout)] == ["first"]
    first.start(repo, title="second").close()
    listed = orjson.loads(cli(store_dir, "list", "--json").stdout)
    assert sorted(t["title"] for t in listed) == ["first", "second"]


def test_a_reindex_elsewhere_never_hides_what_a_long_lived_process_writes(store_dir, repo):
    """Fixture: a long-lived Keeper (like the language server); `sessionkeeper reindex` runs in
    another process between its sessions."""
    server = Keeper(store_dir)
    one = server.start(repo, title="t")
    one.record({"type": "todo", "items": [{"id": "1", "text": "fix rounding"}]})
    one.close()
    cli(store_dir, "reindex")
    report, two = server.resume(one.thread_id, workspace=str(repo))
    two.record({"type": "todo", "items": [{"id": "1", "text": "fix rounding", "status": "done"}]})
    two.record({"type": "verifier", "kind": "tests", "passed": 9, "total": 9})
    two.close()
    fresh = Keeper(store_dir).check_resume(one.thread_id, workspace=str(repo))
    assert fresh.restored_to_seq == two.writer.last_seq
    state = {name: sub.summary for name, sub in fresh.subsystems.items()}
    assert state["todos"]["done"] == 1 and state["verifier"]["tests"]["passed"] == 9


def test_sessions_are_ordered_by_seq_even_when_the_clock_stepped_back(store_dir, repo):
    """Fixture: a thread resumed once; the resumed session's timestamps re-dated to 2020."""
    keeper = Keeper(store_dir)
    one = keeper.start(repo, title="t")
    one.close()
    _, two = keeper.resume(one.thread_id, workspace=str(repo))
    two.record({"type": "todo", "items": [{"id": "1", "text": "x", "status": "done"}]})
    two.close()
    redate(two.writer.path)
    cli(store_dir, "reindex")
    report = Keeper(store_dir).check_resume(one.thread_id, workspace=str(repo))
    assert report.restored_to_seq == two.writer.last_seq
    assert report.subsystems["todos"].summary["done"] == 1


HOLD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("holding", flush=True)
sys.stdin.read()
db.execute("ROLLBACK")
"""


def test_opening_a_store_while_another_process_writes_its_index_never_sets_the_index_aside(
        store_dir, repo):
    """Fixture: a store with one thread; another process holds the index's write transaction (as
    its rebuild in place or its import of agent files does) while this process lists and rebuilds."""
    Keeper(store_dir).start(repo, title="kept").close()
    index = store_dir / "state.db"
    inode = index.stat().st_ino
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(index)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        listed = Store(store_dir).list_threads(ListQuery())
        assert [t.title for t in listed] == ["kept"]
        with pytest.raises(IndexBusy):
            Store(store_dir).rebuild()
        done = cli(store_dir, "reindex", check=False)
        assert (done.returncode, "index_busy" in done.stderr) == (75, True), done.stderr  # busy: later
        assert not list(store_dir.glob("state.db.corrupt-*")), "a busy index was set aside"
        assert index.stat().st_ino == inode
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert [t.title for t in Store(store_dir).list_threads(ListQuery())] == ["kept"]


def test_a_listing_beside_another_process_writing_the_index_is_answered_from_the_index(
        store_dir, repo):
    """Fixture: a store with one thread, its rollouts moved away (a listing from a scan would
    find none); another process holds the index's write transaction while this one lists."""
    Keeper(store_dir).start(repo, title="kept").close()
    (store_dir / "sessions").rename(store_dir / "away")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(store_dir / "state.db")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        assert [t.title for t in Store(store_dir).list_threads(ListQuery())] == ["kept"]
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
        (store_dir / "away").rename(store_dir / "sessions")


ARCHIVER = """
import sys, time
from sessionkeeper.api import Keeper
keeper, thread = Keeper(sys.argv[1]), sys.argv[2]
print("archiving", flush=True)
end = time.monotonic() + float(sys.argv[3])
while time.monotonic() < end:
    keeper.archive(thread)
    keeper.unarchive(thread)
"""


def failed_reads_while_archived(store: Path, thread: str, read: Callable[[], str | None]
                                ) -> tuple[int, list[str]]:
    """Call `read` (a failure's description, or None) over and over while another process
    archives and unarchives `thread` for 6 s; the number of reads and the failures."""
    mover = subprocess.Popen([sys.executable, "-c", ARCHIVER, str(store), thread, "6"],
                             stdout=subprocess.PIPE, text=True, env=child_env())
    failures: list[str] = []
    reads = 0
    try:
        assert mover.stdout is not None and mover.stdout.readline() == "archiving\n"
        while mover.poll() is None:
            reads += 1
            try:
                failure = read()
            except Exception as exc:  # noqa: BLE001 - every failure is what the tests count
                failure = f"{type(exc).__name__}: {exc}"
            if failure is not None:
                failures.append(failure)
    finally:
        mover.wait(timeout=60)
    assert mover.returncode == 0
    return reads, failures


def _todo(session: Session) -> object:
    return session.record({"type": "todo", "items": [{"id": "1", "text": "fix rounding"}]})


def resumed_once(store_dir: Path, repo: Path, *, first: Callable[[Session], object],
                 then: Callable[[Session], object]) -> Session:
    """A thread "moved" of two sessions: one recorded by `first`, closed, resumed, recorded by
    `then`, closed; returns the second (closed) session."""
    keeper = Keeper(store_dir)
    one = keeper.start(repo, title="moved")
    first(one)
    one.close()
    _, two = keeper.resume(one.thread_id, workspace=str(repo))
    assert two is not None
    then(two)
    two.close()
    return two


def test_reading_a_thread_while_another_process_archives_it_follows_its_rollouts(store_dir, repo):
    """Fixture: a thread of two sessions; another process archives and unarchives it over and
    over (its rollouts move between sessions/ and archived_sessions/) while this one replays it."""
    two = resumed_once(store_dir, repo, first=_todo,
                       then=lambda s: s.record({"type": "message", "role": "user", "text": "again"}))
    reader = Keeper(store_dir)

    def read() -> str | None:
        replayed = reader.replay(two.thread_id)
        seqs = [r.last_seq for r in replayed.rollouts]
        if replayed.damaged or not seqs or seqs[-1] != two.writer.last_seq:
            return f"read to {seqs}, damage {[d['kind'] for d in replayed.damaged]}"
        return None

    reads, failures = failed_reads_while_archived(store_dir, two.thread_id, read)
    assert not failures, f"{len(failures)} of {reads} reads failed: {sorted(set(failures))[:4]}"


def test_reading_a_conversation_back_from_the_log_while_another_process_archives_it(store_dir,
                                                                                    repo):
    """Fixture: a thread of 1,500 messages resumed once (its conversation is read back from the
    log, not the snapshot); another process archives and unarchives it over and over meanwhile."""
    keeper = Keeper(store_dir)
    one = keeper.start(repo, title="long")
    for n in range(1500):
        one.record({"type": "message", "role": "user", "text": f"message {n}"})
    one.close()
    _, two = keeper.resume(one.thread_id, workspace=str(repo))
    assert two is not None
    two.record({"type": "message", "role": "user", "text": "again"})
    two.close()
    expected = [m["text"] for m in keeper.replay(one.thread_id).state["context"].messages()]
    assert len(expected) == 1501
    reader = Keeper(store_dir)

    def read() -> str | None:
        got = [m["text"] for m in reader.replay(two.thread_id).state["context"].messages()]
        return None if got == expected else f"{len(got)} messages read back"

    reads, failures = failed_reads_while_archived(store_dir, two.thread_id, read)
    assert not failures, f"{len(failures)} of {reads} reads failed: {sorted(set(failures))[:4]}"


def test_gc_while_another_process_archives_a_thread_keeps_every_blob_it_names(store_dir, repo):
    """Fixture: a thread of two sessions whose files are blobs (two hours old) no other thread
    names; another process archives and unarchives it over and over while this one runs gc."""
    def version(digits: int) -> Callable[[Session], object]:
        def record(session: Session) -> object:
            (repo / "payment.py").write_text(f"def charge(amount):\n    return round(amount, {digits})\n")
            return session.record_file("payment.py")
        return record

    two = resumed_once(store_dir, repo, first=version(2), then=version(3))
    blobs = sorted(store_dir.glob("blobs/??/*"))
    assert len(blobs) == 3
    then = time.time() - 7200
    for path in blobs:
        os.utime(path, (then, then))
    collector = Keeper(store_dir)

    def read() -> str | None:
        removed = collector.gc(dry_run=True).removed
        return f"would remove {len(removed)} of its blobs" if removed else None

    reads, failures = failed_reads_while_archived(store_dir, two.thread_id, read)
    assert not failures, f"{len(failures)} of {reads} gc runs failed: {sorted(set(failures))[:4]}"
    assert Keeper(store_dir).gc().removed == ()


def test_fsck_while_another_process_archives_a_thread_finds_the_store_clean(store_dir, repo):
    """Fixture: a thread of two sessions; another process archives and unarchives it over and
    over while this one runs fsck (without repair: a false problem would be the exit code 1)."""
    two = resumed_once(store_dir, repo, first=_todo, then=lambda s: None)
    assert Keeper(store_dir).fsck().clean
    checker = Keeper(store_dir, read_only=True)

    def read() -> str | None:
        report = checker.fsck()
        return None if report.clean else f"problems: {report}"

    reads, failures = failed_reads_while_archived(store_dir, two.thread_id, read)
    assert not failures, f"{len(failures)} of {reads} fsck runs failed: {sorted(set(failures))[:4]}"


RECORDER = """
import sys
from sessionkeeper.api import Keeper
session = Keeper(sys.argv[1]).start(sys.argv[2], title="open")
for n in range(5):
    session.record({"type": "message", "role": "user", "text": f"message {n}"})
print(session.thread_id, flush=True)
sys.stdin.read()
session.close()
"""


def test_fsck_finds_a_store_clean_while_another_process_records_and_stale_once_it_died(
        store_dir, repo):
    """Fixture: another process holds a session open and has recorded 5 messages since its row
    was written (the index lags its open writer by design); then it is SIGKILLed."""
    writer = subprocess.Popen([sys.executable, "-c", RECORDER, str(store_dir), str(repo)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=child_env())
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip()
        checked = cli(store_dir, "fsck", "--json", check=False)
        assert (checked.returncode, orjson.loads(checked.stdout)["stale_rows"]) == (0, [])
    finally:
        writer.kill()
        writer.wait(timeout=30)
    dead = cli(store_dir, "fsck", "--json", check=False)
    assert (dead.returncode, len(orjson.loads(dead.stdout)["stale_rows"])) == (1, 1)


REATTACHER = """
import sys, time
from sessionkeeper.api import Keeper
keeper = Keeper(sys.argv[1])
session = keeper.start(sys.argv[2], title="busy")
session.close()
print("recording", flush=True)
end = time.monotonic() + float(sys.argv[3])
while time.monotonic() < end:
    session = keeper.attach(session.session_id)
    for n in range(3):
        session.record({"type": "message", "role": "user", "text": f"m{n} " + "x" * 20000})
    session.close()
"""


def test_fsck_while_another_process_records_and_closes_its_session_finds_the_store_clean(
        store_dir, repo):
    """Fixture: another process attaches to its session, records three 20 kB messages and closes
    it, over and over for 6 s (lines in flight, rows written at close) while this one runs fsck."""
    writer = subprocess.Popen([sys.executable, "-c", REATTACHER, str(store_dir), str(repo), "6"],
                              stdout=subprocess.PIPE, text=True, env=child_env())
    checker = Keeper(store_dir, read_only=True)
    failures: list[str] = []
    runs = 0
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "recording\n"
        while writer.poll() is None:
            runs += 1
            report = checker.fsck()
            if not report.clean:
                failures.append(f"stale {report.stale_rows} missing {report.missing_rows} "
                                f"damaged {report.damaged}")
    finally:
        writer.wait(timeout=60)
    assert writer.returncode == 0
    assert not failures, f"{len(failures)} of {runs} fsck runs failed: {failures[:3]}"
