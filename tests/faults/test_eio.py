"""Real EIO from write() and fsync(), injected by libfiu into a recording child process
(reliability.md §4.3 F1/F2; issue 12 item 12). The child runs unmodified under `fiu-run -x`;
the test turns the failure points on and off from outside with `fiu-ctrl`.

Checked every time: nothing that failed was acknowledged; a failed write is cut off, named for
what it is (`store_io_error`, never `store_full`) and its seq given back; a failed fsync makes
the session read-only for good (`durability_lost`, no retry); every acknowledged event is in the
rollout re-read from disk afterwards, and the thread resumes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper

from .conftest import Child, Ledger

WRITE = "posix/io/rw/write"
FSYNC = "posix/io/sync/*"  # fsync and fdatasync (rollouts sync with fdatasync)
EIO = 5


@pytest.fixture
def child(fiu_run: str, store_dir: Path, repo: Path) -> Iterator[Child]:
    """A fault_child under fiu-run -x, started on a fresh thread in the `repo` workspace."""
    proc = Child(store_dir, repo, fiu_run=fiu_run)
    yield proc
    proc.close()


def _start(child: Child) -> tuple[str, Path]:
    reply = child.ask("start")
    assert reply.startswith("R "), reply
    _, thread, _session, path = reply.split(" ")
    return thread, Path(path)


def _error(reply: str) -> tuple[str, int, str]:
    assert reply.startswith("E "), f"expected an error, got {reply!r}"
    _, name, code, number, *_ = reply.split(" ")
    return name, int(code), number


def test_eio_on_write_is_cut_off_named_and_its_seq_given_back(child: Child, repo: Path,
                                                              store_dir: Path) -> None:
    """Fixture: child; 5 records, then write() fails with EIO for 3 records, then 5 more."""
    thread, path = _start(child)
    ledger = Ledger("EIO on write")
    for n in range(5):
        assert ledger.take(child.ask(f"record written ok{n} 2000"), f"ok{n}")
    last = max(ledger.acked)
    child.fiu(f"enable name={WRITE},failinfo={EIO}")
    for n in range(3):
        reply = child.ask(f"record written eio{n} 2000")
        assert _error(reply) == ("store_io_error", 74, str(EIO)), reply
        ledger.refused.append(f"eio{n}")
    child.fiu(f"disable name={WRITE}")
    reply = child.ask("record written after 2000")
    assert ledger.take(reply, "after") and int(reply.split()[1]) == last + 1, "seq not given back"
    for n in range(4):
        assert ledger.take(child.ask(f"record durable more{n} 500"), f"more{n}")
    assert child.ask("close") == "C"
    ledger.check(path)
    report, session = Keeper(store_dir).resume(thread, workspace=str(repo))
    assert report.verdict == "ok" and session is not None
    session.close()


def test_eio_on_fsync_makes_the_session_read_only_for_good(child: Child, repo: Path, store_dir: Path) -> None:
    """Fixture: child; durable records, then fsync() fails with EIO once; never retried."""
    thread, path = _start(child)
    ledger = Ledger("EIO on fsync")
    for n in range(5):
        assert ledger.take(child.ask(f"record durable ok{n} 1000"), f"ok{n}")
    child.fiu(f"enable name={FSYNC},failinfo={EIO}")
    assert _error(child.ask("record durable lost 1000"))[:2] == ("durability_lost", 73)
    child.fiu(f"disable name={FSYNC}")  # the disk "recovers": the session must stay read-only
    for level in ("written", "durable", "none"):
        assert _error(child.ask(f"record {level} late 100"))[:2] == ("read_only", 73)
    assert _error(child.ask("begin op-after"))[:2] == ("read_only", 73)
    assert child.ask("close") == "C"
    ledger.check(path, cut_off=False)  # `lost` reached the kernel; it was never called durable
    report, session = Keeper(store_dir).resume(thread, workspace=str(repo))
    assert session is not None, report.verdict
    session.record({"type": "message", "role": "user", "text": "after the failed fsync"})
    session.close()


def test_a_side_effect_is_never_cleared_to_run_when_its_start_is_not_durable(child: Child) -> None:
    """Fixture: child; begin_operation while fsync() fails: no `run` ticket is ever handed out."""
    _start(child)
    assert child.ask("begin op-1").startswith("T run ")
    child.fiu(f"enable name={FSYNC},failinfo={EIO}")
    assert _error(child.ask("begin op-2"))[:2] == ("durability_lost", 73)
    child.fiu(f"disable name={FSYNC}")
    assert _error(child.ask("begin op-3"))[:2] == ("read_only", 73)


def test_fsync_failing_at_start_is_a_typed_error_with_exit_74(child: Child, store_dir: Path) -> None:
    """Fixture: child; fsync() fails with EIO before the thread is started."""
    child.fiu(f"enable name={FSYNC},failinfo={EIO}")
    assert _error(child.ask("start")) == ("store_io_error", 74, str(EIO))
    child.fiu(f"disable name={FSYNC}")
    reply = child.ask("start")  # the disk recovered: a new start works
    assert reply.startswith("R "), reply


def test_eio_on_write_at_start_is_a_typed_error_with_exit_74(child: Child) -> None:
    """Fixture: child; write() fails with EIO while the session_meta is written."""
    child.fiu(f"enable name={WRITE},failinfo={EIO}")
    name, code, _ = _error(child.ask("start"))
    child.fiu(f"disable name={WRITE}")
    assert (name, code) == ("store_io_error", 74)


def test_a_start_that_failed_leaves_no_file_behind(child: Child, store_dir: Path) -> None:
    """Fixture: child; write() fails with EIO while the session_meta is written."""
    child.fiu(f"enable name={WRITE},failinfo={EIO}")
    assert _error(child.ask("start"))[0] == "store_io_error"
    child.fiu(f"disable name={WRITE}")
    keeper = Keeper(store_dir)
    assert keeper.rows(include_archived=True) == []
    assert keeper.store.layout.scan_rollouts() == []
