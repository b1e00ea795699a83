"""Two machines, one shared index: record on a laptop, list, check and resume in CI (fixtures:
`pg_url`, `repo`, tests/conftest.py; real `sessionkeeper` processes as the two machines, a real
PostgreSQL server and real git clones)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.postgres._machines import Machine, password_nowhere


@pytest.fixture
def machines(pg_url: str, tmp_path: Path) -> tuple[Machine, Machine]:
    """The laptop and CI, each with its own store, both on the server of `pg_url`."""
    return (Machine("laptop", tmp_path / "laptop-store", pg_url),
            Machine("ci", tmp_path / "ci-store", pg_url))


def test_a_thread_recorded_on_one_machine_is_listed_checked_and_resumed_on_another(
        machines: tuple[Machine, Machine], repo: Path, tmp_path: Path) -> None:
    """Fixture: `machines`; the laptop records in `repo`, CI works in a clone of it elsewhere."""
    laptop, ci = machines
    started = laptop.json("start", "--workspace", str(repo), "--title", "fix payment")
    thread, session = started["thread_id"], started["session_id"]
    laptop.record(session, "fix the rounding bug", "and add a test")
    clone = tmp_path / "ci-checkout"
    git(tmp_path, "clone", "-q", "-b", "fix/payment", str(repo), str(clone))

    listed = ci.json("list")
    assert [(t["thread_id"], t["machine"], t["title"]) for t in listed] == [
        (thread, "laptop", "fix payment")]
    assert ci.json("list", "--machine", "ci") == []
    shown = ci.json("show", thread)
    assert [s["session_id"] for s in shown["sessions"]] == [session]
    assert shown["sessions"][0]["event_count"] >= 2
    refused = ci.run("record", "--session", session, stdin='{"type":"message","role":"user",'
                     '"text":"x"}\n', ok=(73,))
    assert "recorded on laptop" in refused.stderr  # a pulled copy is never appended to

    report = ci.json("--check-resume", thread, "--workspace", str(clone), ok=(10,))
    assert [d["kind"] for d in report["differences"]] == ["relocated"]
    ci.run("--check-resume", thread, "--workspace", str(clone), "--allow-relocation")

    resumed = ci.json("resume", thread, "--workspace", str(clone), "--decision", "continue")
    assert resumed["report"]["continued"] is True
    back = laptop.json("show", thread)
    assert [s["session_id"] for s in back["sessions"]][0] == session
    assert len(back["sessions"]) == 2 and back["sessions"][1]["machine"] == "ci"
    assert laptop.json("list", "--machine", "ci")[0]["thread_id"] == thread
    password_nowhere([laptop, ci])
    skipped = [t for m in (laptop, ci) for t in m.outputs if "the local store answered" in t]
    assert skipped == []  # every shared step (push, pull, lease, list) reached the server


def test_sync_pushes_what_a_machine_recorded_once_and_only_once(
        machines: tuple[Machine, Machine], repo: Path) -> None:
    """Fixture: `machines`; the laptop records, syncs twice, records more, syncs again."""
    laptop, _ = machines
    started = laptop.json("start", "--workspace", str(repo))
    laptop.record(started["session_id"], "one", "two")
    again = laptop.json("sync")
    assert (again["records"], again["unchanged"]) == (0, 1)
    laptop.record(started["session_id"], "three")
    more = laptop.json("sync")
    assert more["records"] == 0  # the session's close pushed it already
    assert laptop.json("sync", "--thread", started["thread_id"])["sessions"] == 0
