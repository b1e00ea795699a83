"""Real ENOSPC: the store on a 2 MiB tmpfs, filled up while a session records through the API
(reliability.md §4.3 F1; issue 12). Needs `mount -t tmpfs` (root here); under CI a refused mount
fails the test, elsewhere it skips with the reason (tests/faults/conftest.py).

Checked every time: the failed write is a `StoreFull` (exit 74) whose cause is ENOSPC, cut off to
the last whole line (also when the write got part way: tmpfs takes what fits), its seq given
back; the session stays usable and continues with the next seq once space is free; every
acknowledged event is in the rollout re-read from disk; the thread resumes.
"""

from __future__ import annotations

import errno
import gc
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import DurabilityLost, SessionReadOnly, StoreFull
from sessionkeeper.events import Durability
from sessionkeeper.session.live import Session
from sessionkeeper.store.recorder import Recorder
from sessionkeeper.store.sinks import FileSink

from ..conftest import init_repo
from .conftest import Ledger


def _fill(mount: Path, leave: int) -> Path:
    """Take all but `leave` bytes of the file system with one filler file, measured after a
    collection: an SQLite connection nobody closed (a Keeper dropped by the test) is freed only
    by the collector — on Python 3.11 its statement cache refers back to it — and its WAL file's
    pages with it, which would make room later, at a moment no test chooses."""
    gc.collect()
    info = os.statvfs(mount)
    free = info.f_bavail * info.f_frsize
    filler = mount / "filler"
    with open(filler, "wb") as handle:
        handle.write(b"\0" * max(0, free - leave))
    return filler


def _record_until_full(session: Session, ledger: Ledger, *, size: int,
                       level: Durability = Durability.WRITTEN) -> StoreFull:
    for n in range(10_000):
        tag = f"m{n}"
        try:
            ack = session.record({"type": "message", "role": "user", "text": f"{tag} " + "x" * size},
                                 durability=level)
        except StoreFull as exc:
            ledger.refused.append(tag)
            return exc
        ledger.acked[ack.seq] = tag
    raise AssertionError("the store never filled up")


def test_enospc_is_store_full_cut_off_and_recording_continues_once_space_is_free(small_tmpfs: Path,
                                                                                 repo: Path) -> None:
    """Fixture: small_tmpfs holding the store, filled to 48 KiB free; 3 KiB messages."""
    store = small_tmpfs / "store"
    keeper = Keeper(store)
    session = keeper.start(repo, title="enospc")
    ledger = Ledger("ENOSPC on tmpfs (written)")
    filler = _fill(small_tmpfs, leave=48 * 1024)
    error = _record_until_full(session, ledger, size=3000)
    assert isinstance(error.__cause__, OSError) and error.__cause__.errno == errno.ENOSPC
    assert error.exit_code == 74 and error.name == "store_full"
    assert session.writer.recorder.read_only_reason is None  # full is not broken
    size = os.path.getsize(session.path)
    assert size == session.writer.recorder.size, "a partial record was left on disk"
    for n in range(3):  # still full: each attempt fails the same way and leaves nothing
        with pytest.raises(StoreFull):
            session.record({"type": "message", "role": "user", "text": f"again{n} " + "x" * 3000})
        ledger.refused.append(f"again{n}")
    assert os.path.getsize(session.path) == size
    filler.unlink()
    ack = session.record({"type": "message", "role": "user", "text": "freed " + "x" * 3000})
    assert ack.seq == max(ledger.acked) + 1, "the failed records' seqs were not given back"
    ledger.acked[ack.seq] = "freed"
    session.close()
    ledger.check(Path(session.path))
    report, resumed = Keeper(store).resume(session.thread_id, workspace=str(repo))
    assert report.verdict == "ok" and resumed is not None
    resumed.close()


def test_enospc_on_durable_records_acknowledges_nothing_that_failed(small_tmpfs: Path, repo: Path) -> None:
    """Fixture: small_tmpfs holding the store, filled to 40 KiB free; durable 2 KiB messages."""
    store = small_tmpfs / "store"
    session = Keeper(store).start(repo, title="enospc durable")
    ledger = Ledger("ENOSPC on tmpfs (durable)")
    filler = _fill(small_tmpfs, leave=40 * 1024)
    _record_until_full(session, ledger, size=2000, level=Durability.DURABLE)
    filler.unlink()
    session.close()
    ledger.check(Path(session.path))


def test_enospc_when_buffered_records_are_flushed_makes_the_session_read_only(small_tmpfs: Path,
                                                                              repo: Path) -> None:
    """Fixture: small_tmpfs holding the store; `none` records buffered, then the disk is full."""
    store = small_tmpfs / "store"
    session = Keeper(store, durability="none").start(repo, title="enospc none")
    for n in range(3):
        session.record({"type": "message", "role": "user", "text": f"buffered{n}"})
    _fill(small_tmpfs, leave=0)
    with pytest.raises(DurabilityLost, match="acknowledged buffered"):
        session.record({"type": "message", "role": "user", "text": "x" * 200_000},
                       durability=Durability.WRITTEN)
    with pytest.raises(SessionReadOnly):
        session.record({"type": "message", "role": "user", "text": "later"})
    session.close()


def test_starting_a_thread_on_a_full_store_is_store_full(small_tmpfs: Path, repo: Path) -> None:
    """Fixture: small_tmpfs with the store created, then filled to the last byte."""
    store = small_tmpfs / "store"
    Keeper(store).start(repo, title="first").close()
    _fill(small_tmpfs, leave=0)
    with pytest.raises(StoreFull) as caught:
        Keeper(store).start(repo, title="second")
    assert caught.value.exit_code == 74


def test_a_snapshot_failing_at_close_still_closes_the_session_and_frees_the_thread(
        small_tmpfs: Path, repo: Path) -> None:
    """Fixture: small_tmpfs holding the store; a session with messages recorded, then the file
    system filled so the snapshot written at close cannot fit: the snapshot is optional (the
    records are written), so close releases the thread and the thread resumes once space is free."""
    keeper = Keeper(small_tmpfs / "store")
    session = keeper.start(repo, title="full at close")
    acked = [session.record({"type": "message", "role": "user", "text": f"m{n} " + "x" * 2000}).seq
             for n in range(20)]
    filler = _fill(small_tmpfs, leave=0)
    session.close()
    assert session.writer.recorder.read_only_reason == "closed"
    filler.unlink()
    report, resumed = keeper.resume(session.thread_id, workspace=str(repo))
    assert resumed is not None and report.restored_to_seq >= acked[-1]
    resumed.close()


def test_enospc_on_a_none_record_too_large_to_buffer_is_store_full_and_recording_continues(
        small_tmpfs: Path, repo: Path) -> None:
    """Fixture: small_tmpfs holding the store, filled up; a `none` session with nothing buffered
    records a message larger than its buffer (so it is written at once)."""
    store = small_tmpfs / "store"
    session = Keeper(store, durability="none").start(repo, title="enospc large none")
    ledger = Ledger("ENOSPC on tmpfs (none, larger than the buffer)")
    size, seq = os.path.getsize(session.path), session.writer.recorder.next_seq
    filler = _fill(small_tmpfs, leave=0)
    with pytest.raises(StoreFull):
        session.record({"type": "message", "role": "user", "text": "big " + "x" * 200_000})
    ledger.refused.append("big")
    assert session.writer.recorder.read_only_reason is None, "nothing acknowledged was lost"
    assert os.path.getsize(session.path) == size == session.writer.recorder.size
    filler.unlink()
    ack = session.record({"type": "message", "role": "user", "text": "after"},
                         durability=Durability.WRITTEN)
    assert ack.seq == seq, "the failed record's seq was not given back"
    ledger.acked[ack.seq] = "after"
    session.close()
    ledger.check(Path(session.path))


def _descriptors_of(path: Path) -> list[str]:
    """This process's open descriptors on `path`."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                found.append(fd)
        except OSError:  # the descriptor listdir itself used
            continue
    return found


def test_a_recorder_that_cannot_write_its_buffer_on_close_still_closes_its_file(
        small_tmpfs: Path) -> None:
    """Fixture: small_tmpfs; a rollout's recorder holding a `none` record when the disk fills up."""
    path = small_tmpfs / "rollout.jsonl"
    recorder = Recorder(FileSink(path), durability=Durability.NONE)
    recorder.append([b'{"type":"message","role":"user","text":"' + b"x" * 30_000 + b'"}'])
    _fill(small_tmpfs, leave=0)
    assert _descriptors_of(path)
    with pytest.raises(DurabilityLost, match="acknowledged buffered"):
        recorder.close()
    assert _descriptors_of(path) == [], "the rollout's descriptor leaked"
    with pytest.raises(SessionReadOnly):
        recorder.append([b'{"type":"message","role":"user","text":"later"}'])


def test_a_rewind_out_of_space_in_the_workspace_leaves_the_file_and_reports_it_as_it_is(
        small_tmpfs: Path, tmp_path: Path) -> None:
    """Fixture: small_tmpfs holding a git workspace (the store elsewhere); the agent writes a
    1.2 MB big.txt, then shrinks it; the tmpfs filled to 64 KiB free; `sessionkeeper rewind` to
    the big version through the CLI."""
    repo = init_repo(small_tmpfs / "repo", {"README.md": "on a small disk\n"})
    big = b"".join(b"line %d of the big file\n" % i for i in range(50_000))
    with Keeper(tmp_path / "store").start(repo) as session:
        (repo / "big.txt").write_bytes(big)
        to = session.record({"type": "file_change", "path": "big.txt"}).seq
        (repo / "big.txt").write_bytes(b"small\n")
        session.record({"type": "file_change", "path": "big.txt"})
        thread = session.thread_id
    _fill(small_tmpfs, leave=64 * 1024)
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", "rewind", thread, "--to", str(to),
                           "--store", str(tmp_path / "store"), "--json"], capture_output=True,
                          timeout=60)
    assert done.returncode == 1, done.stderr.decode()
    [step] = orjson.loads(done.stdout)["steps"]
    assert step["outcome"] == "failed" and "No space left" in step["reason"]
    assert (repo / "big.txt").read_bytes() == b"small\n"
    assert step["after_hash"] == step["before_hash"] == hashlib.sha256(b"small\n").hexdigest()
    assert not list(repo.glob(".big.txt.*"))


def test_fsck_repair_on_a_full_store_never_cuts_a_torn_tail_it_could_not_keep_whole(
        small_tmpfs: Path, repo: Path) -> None:
    """Fixture: small_tmpfs holding the store; a rollout cut 600 kB into its last line (a 900 kB
    message), then the file system filled to 128 KiB free; the real `fsck --repair` process."""
    store = small_tmpfs / "store"
    with Keeper(store).start(repo, title="torn") as session:
        session.record({"type": "message", "role": "user", "text": "big " + "x" * 900_000})
        path = Path(session.path)
    data = path.read_bytes()
    start = data.index(b"big xxx")
    start = data.rindex(b"\n", 0, start) + 1
    os.truncate(path, start + 600_000)
    before = path.read_bytes()
    filler = _fill(small_tmpfs, leave=128 * 1024)

    def repair() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "sessionkeeper", "fsck", "--repair",
                               "--store", str(store)], capture_output=True, text=True, timeout=60)

    full = repair()
    kept = [p.read_bytes() for p in sorted((store / "quarantine").glob("*.torn"))]
    assert (path.read_bytes() == before, [len(k) for k in kept]) == (True, [])
    assert full.returncode == 74 and "store_full" in full.stderr, (full.returncode, full.stderr)
    filler.unlink()
    assert repair().returncode == 0
    (torn,) = (store / "quarantine").glob("*.torn")
    assert path.read_bytes() + torn.read_bytes() == before


def test_fsck_repair_on_a_full_store_keeps_its_index_and_says_index_full(
        small_tmpfs: Path, repo: Path) -> None:
    """Fixture: small_tmpfs holding a store of five threads, one rollout deleted by hand (a
    dangling row: the repair rebuilds the index), the file system filled to 4 KiB free."""
    store = small_tmpfs / "store"
    keeper = Keeper(store)
    for t in range(5):
        with keeper.start(repo, title=f"t{t}") as session:
            for n in range(20):
                session.record({"type": "message", "role": "user", "text": f"m{n} " + "x" * 3000})
    os.unlink(sorted(store.glob("sessions/*/*/*/*.jsonl"))[0])

    def fsck(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "sessionkeeper", "fsck", *args, "--store",
                               str(store)], capture_output=True, text=True, timeout=60)

    filler = _fill(small_tmpfs, leave=4096)
    full = fsck("--repair")
    filler.unlink()
    assert (full.returncode, "index_full" in full.stderr) == (74, True), full.stderr
    assert not list(store.glob("state.db.corrupt-*")), "a healthy index was set aside as corrupt"
    assert fsck("--repair").returncode == 0
    assert fsck().returncode == 0
