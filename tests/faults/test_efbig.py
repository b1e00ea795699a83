"""Real EFBIG: a recording child lowers its own RLIMIT_FSIZE (SIGXFSZ ignored) so the next write
of the rollout crosses the limit (reliability.md §4.3 F1; issue 12).

The kernel then writes what fits and fails the rest: a real short write, finished by the sink,
whose second write() fails with EFBIG. Checked: `store_full` (exit 74, errno EFBIG), the partial
bytes cut off, the seq given back, recording continues once the limit is lifted, every
acknowledged event is in the rollout re-read from disk.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper

from .conftest import Child, Ledger


@pytest.fixture
def child(store_dir: Path, repo: Path) -> Iterator[Child]:
    """A fault_child (no preload) started on a fresh thread in the `repo` workspace."""
    proc = Child(store_dir, repo)
    yield proc
    proc.close()


@pytest.mark.parametrize("room", [0, 1, 100, 2999])
def test_efbig_mid_record_is_store_full_cut_off_and_recording_continues(child: Child, repo: Path,
                                                                        store_dir: Path, room: int) -> None:
    """Fixture: child; 5 records, then RLIMIT_FSIZE at the rollout's size + `room` bytes."""
    reply = child.ask("start")
    assert reply.startswith("R "), reply
    thread, path = reply.split(" ")[1], Path(reply.split(" ")[3])
    ledger = Ledger(f"EFBIG, {room} bytes of room")
    for n in range(5):
        assert ledger.take(child.ask(f"record written ok{n} 3000"), f"ok{n}")
    size = int(child.ask("size").split()[1])
    assert path.stat().st_size == size
    assert child.ask(f"limit {size + room}") == "L"
    for n in range(2):
        reply = child.ask(f"record written big{n} 3000")
        name, code, number = reply.split(" ")[1:4]
        assert (name, int(code), int(number)) == ("store_full", 74, errno.EFBIG), reply
        ledger.refused.append(f"big{n}")
        assert path.stat().st_size == size, "the partial record was not cut off"
    assert child.ask("limit -1") == "L"  # RLIM_INFINITY again
    last = max(ledger.acked)
    reply = child.ask("record written after 3000")
    assert ledger.take(reply, "after")
    assert int(reply.split()[1]) == last + 1, "the failed records' seqs were not given back"
    assert child.ask("close") == "C"
    ledger.check(path)
    report, session = Keeper(store_dir).resume(thread, workspace=str(repo))
    assert report.verdict == "ok" and session is not None
    session.close()
