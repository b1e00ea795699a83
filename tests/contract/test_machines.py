"""Each session names its machine (host name, user) and a listing filters by it, in every index
backend (fixtures: `repo`, `store_dir`, tests/conftest.py; `pg_url` for PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.store.index import IndexBackend, ListQuery, SessionRow
from sessionkeeper.store.index.backends import SqliteBackend
from sessionkeeper.store.index.memory import MemoryBackend
from sessionkeeper.store.machine import ENV_MACHINE, user_name

T1, T2 = ("00000000-0000-4000-8000-00000000000" + str(n) for n in (1, 2))


@pytest.fixture(params=["sqlite", "memory", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> IndexBackend:
    """Each backend, empty."""
    if request.param == "postgres":
        from sessionkeeper.store.index.postgres import PostgresBackend

        return PostgresBackend(request.getfixturevalue("pg_url"), store_id="a")
    return SqliteBackend(tmp_path / "state.db") if request.param == "sqlite" else MemoryBackend()


def test_a_listing_by_machine_keeps_threads_whose_newest_session_ran_there(
        backend: IndexBackend) -> None:
    """Fixture: `backend`; T1 started on the laptop and resumed in CI, T2 on the laptop only."""
    def row(session: str, thread: str, machine: str, seq: int, last: str) -> SessionRow:
        return SessionRow(session_id=session, thread_id=thread, path=f"{session}.jsonl",
                          machine=machine, os_user="ana", first_seq=seq, last_activity=last)

    index = backend.build([row("s1", T1, "laptop", 0, "2026-01-01"),
                           row("s2", T1, "ci", 5, "2026-01-03"),
                           row("s3", T2, "laptop", 0, "2026-01-02")])
    assert [t.thread_id for t in index.list_threads(ListQuery(machine="laptop"))] == [T2]
    assert [t.thread_id for t in index.list_threads(ListQuery(machine="ci"))] == [T1]
    thread = index.thread(T1)
    assert thread is not None and (thread.machine, thread.os_user) == ("ci", "ana")


def test_a_session_records_its_machine_and_the_cli_filters_by_it(
        repo: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Fixture: `repo`, `store_dir`; one thread started as machine `laptop`, one as `ci`."""
    from sessionkeeper.cli import main
    from sessionkeeper.store.reader import read_rollout

    threads = {}
    for machine in ("laptop", "ci"):
        monkeypatch.setenv(ENV_MACHINE, machine)
        session = Keeper(store_dir).start(repo, title=f"on {machine}")
        threads[machine] = session.thread_id
        path = Path(session.path)
        session.close()
        meta = read_rollout(path).meta
        assert meta is not None and meta["machine"] == {"host": machine, "user": user_name()}
    assert main(["list", "--store", str(store_dir), "--machine", "laptop", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(t["thread_id"], t["machine"]) for t in listed] == [(threads["laptop"], "laptop")]
    assert main(["list", "--store", str(store_dir)]) == 0
    text = capsys.readouterr().out
    assert "machine" in text and f"{user_name()}@ci" in text  # not all of them ran here
