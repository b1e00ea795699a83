"""The reader on every damaged-rollout fixture: exact status, records, damage and tail."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from sessionkeeper.store.quarantine import quarantine_tail
from sessionkeeper.store.reader import Status, read_latest, read_rollout
from sessionkeeper.store.store import Store

from ..conftest import FIXTURES

SESSION = "c3a1e9d4-5b6f-4a7c-8d9e-0f1a2b3c4d5e"


def fixture_path(scenario: str) -> Path:
    """The rollout of a fixture scenario."""
    return next((FIXTURES / "rollouts" / scenario).glob("rollout-*.jsonl"))


def test_intact_rollout_reads_every_record():
    """Fixture: rollouts/intact."""
    rollout = read_rollout(fixture_path("intact"))
    assert rollout.status is Status.OK
    assert [r["seq"] for r in rollout.records] == [1, 2, 3, 4, 5]
    assert rollout.damage == [] and rollout.tail is None and rollout.duplicates == []


@pytest.mark.parametrize("scenario,reason", [("torn_tail", "torn: no newline"),
                                             ("nul_tail", "NUL bytes")])
def test_torn_or_nul_tail_keeps_the_complete_prefix_and_reports_the_tail(scenario, reason):
    """Fixtures: rollouts/torn_tail, rollouts/nul_tail."""
    path = fixture_path(scenario)
    rollout = read_rollout(path)
    intact = fixture_path("intact").stat().st_size
    assert rollout.status is Status.OK
    assert [r["seq"] for r in rollout.records] == [1, 2, 3, 4, 5]
    assert rollout.tail is not None
    assert (rollout.tail.offset, rollout.tail.length, rollout.tail.reason) == (
        intact, path.stat().st_size - intact, reason)


def test_middle_damage_is_reported_with_its_line_and_never_skipped_silently():
    """Fixture: rollouts/middle_damage (line 3 garbage)."""
    rollout = read_rollout(fixture_path("middle_damage"))
    assert rollout.status is Status.DAMAGED
    assert [(d.line, d.kind) for d in rollout.damage] == [(3, "checksum")]
    assert [r["seq"] for r in rollout.records] == [1, 3, 4, 5]
    assert rollout.tail is None


def test_duplicate_seq_is_dropped_and_reported():
    """Fixture: rollouts/duplicate_seq (seq 3 twice, identical)."""
    rollout = read_rollout(fixture_path("duplicate_seq"))
    assert rollout.status is Status.OK
    assert rollout.duplicates == [{"line": 5, "seq": 3, "type": "operation",
                                   "operation_id": "op-1"}]
    assert [r["seq"] for r in rollout.records] == [1, 2, 3, 4, 5]


def test_missing_meta_is_its_own_status():
    """Fixture: rollouts/missing_meta."""
    rollout = read_rollout(fixture_path("missing_meta"))
    assert rollout.status is Status.NO_META
    assert rollout.meta is None
    assert rollout.damage[0].kind == "no_meta"


def test_empty_file_is_its_own_status():
    """Fixture: rollouts/empty_file."""
    assert read_rollout(fixture_path("empty_file")).status is Status.EMPTY


def test_future_schema_is_refused_not_misread():
    """Fixture: rollouts/future_schema (schema_version 99)."""
    rollout = read_rollout(fixture_path("future_schema"))
    assert rollout.status is Status.FUTURE_SCHEMA
    assert rollout.schema_version == 99 and rollout.records == []


def test_unknown_event_type_is_reported_and_kept_out_of_the_records():
    """Fixture: rollouts/unknown_type (seq 3 `teleport`)."""
    rollout = read_rollout(fixture_path("unknown_type"))
    assert [(d.line, d.kind) for d in rollout.damage] == [(4, "unknown_type")]
    assert [r["seq"] for r in rollout.records] == [1, 2, 4, 5]


def test_old_schema_is_upcast_to_the_current_shape():
    """Fixture: rollouts/old_schema (schema 1: nested payload, no checksum)."""
    rollout = read_rollout(fixture_path("old_schema"))
    assert rollout.status is Status.OK
    assert rollout.schema_version == 1
    assert rollout.meta["thread_id"] == "7b0c4a52-3f7e-4c1e-9a43-1f2d5e6a7b80"
    assert rollout.records[4]["passed"] == 7 and rollout.records[4]["ts"].startswith("2026-11-28")


def test_read_latest_without_snapshot_equals_a_full_read():
    """Fixture: rollouts/intact."""
    path = fixture_path("intact")
    assert read_latest(path).records == read_rollout(path).records


def _store_with(tmp_path: Path, scenario: str) -> tuple[Store, Path]:
    store = Store(tmp_path / "store")
    day = store.layout.sessions / "2026" / "11" / "28"
    day.mkdir(parents=True)
    target = day / fixture_path(scenario).name
    shutil.copyfile(fixture_path(scenario), target)
    return store, target


def test_quarantine_cuts_the_torn_tail_off_and_keeps_its_bytes(tmp_path):
    """Fixture: rollouts/torn_tail copied into a temporary store."""
    store, path = _store_with(tmp_path, "torn_tail")
    torn = path.read_bytes()[fixture_path("intact").stat().st_size:]
    done = quarantine_tail(store.layout, read_rollout(path))
    assert path.read_bytes() == fixture_path("intact").read_bytes()
    assert Path(done.path).read_bytes() == torn
    assert oct(Path(done.path).stat().st_mode & 0o777) == "0o600"
    assert read_rollout(path).tail is None


def test_lost_index_is_rebuilt_and_the_thread_listed(tmp_path):
    """Fixture: rollouts/intact in a store without state.db."""
    store, _ = _store_with(tmp_path, "intact")
    assert not store.layout.index_path.exists()
    threads = store.list_threads(__import__("sessionkeeper.store.index", fromlist=["ListQuery"])
                                 .ListQuery())
    assert [(t.thread_id, t.title, t.event_count) for t in threads] == [
        ("7b0c4a52-3f7e-4c1e-9a43-1f2d5e6a7b80", "fix payment rounding", 5)]


def test_one_bad_file_never_blocks_listing_the_others(tmp_path):
    """Fixtures: rollouts/intact plus empty_file, missing_meta, future_schema in one store."""
    store, _ = _store_with(tmp_path, "intact")
    day = store.layout.sessions / "2026" / "11" / "29"
    day.mkdir(parents=True)
    for n, scenario in enumerate(("empty_file", "missing_meta", "middle_damage")):
        other = fixture_path(scenario).name.replace(SESSION[:8], f"{n}" * 8)
        shutil.copyfile(fixture_path(scenario), day / other)
    counts = store.rebuild()
    assert counts["unindexable"] == 2  # empty + missing meta: reported by fsck, not listed
    assert len(store.list_threads(__import__("sessionkeeper.store.index",
                                             fromlist=["ListQuery"]).ListQuery())) == 1


def test_a_rollout_claiming_another_threads_id_never_joins_it(tmp_path, repo):
    """Fixture: a real thread; a crafted rollout with the victim's thread_id and seq 10**9."""
    from sessionkeeper.api import Keeper
    from sessionkeeper.store.codec import frame

    store_dir = tmp_path / "store"
    keeper = Keeper(store_dir)
    victim = keeper.start(repo, title="victim")
    victim.record({"type": "todo", "items": [{"id": "1", "text": "real", "status": "done"}]})
    victim.close()
    crafted = {"type": "session_meta", "schema_version": 2, "thread_id": victim.thread_id,
               "session_id": "00000000-0000-4000-8000-0000000000ee", "cwd": str(repo),
               "source": "resume", "title": "hijacked"}
    body = orjson.dumps({k: v for k, v in crafted.items()})
    line = frame(10**9, b"2026-12-01T00:00:00.000Z", body)
    todo = frame(10**9 + 1, b"2026-12-01T00:00:00.000Z",
                 b'{"type":"todo","items":[{"id":"x","text":"evil","status":"pending"}]}')
    day = next((store_dir / "sessions").rglob("rollout-*.jsonl")).parent
    (day / "rollout-20261201T000001000Z-00000000-0000-4000-8000-0000000000ee.jsonl").write_bytes(
        line + todo)
    report = Keeper(store_dir).check_resume(victim.thread_id, workspace=str(repo))
    assert report.verdict == "blocked"
    assert [d["kind"] for d in report.damaged] == ["foreign_session"]
    assert report.subsystems["todos"].summary["items"][0]["text"] == "real"
    assert report.title == "victim"
