"""Rebuilding the index from the rollouts: a bad file is refused for itself only, and the rows are
the ones each file gives on its own (`Catalog.probe`), whether the index is missing or healthy."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import IndexUnavailable
from sessionkeeper.store.index import SessionRow
from sessionkeeper.store.index.sql import INDEX_NAMES
from sessionkeeper.store.store import Store

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rollouts"


@pytest.fixture
def recorded(store_dir: Path, repo: Path) -> Store:
    """A store with two threads recorded through the API (one resumed) and the index removed."""
    keeper = Keeper(store_dir)
    first = keeper.start(repo, title="first")
    first.record({"type": "message", "role": "user", "text": "one"})
    first.close()
    _report, again = keeper.resume(first.thread_id, workspace=str(repo), decision="continue")
    assert again is not None
    again.close()
    other = keeper.start(repo, title="second")
    other.close()
    return Store(store_dir)


def test_a_rollout_symlinked_out_of_the_store_is_refused_and_the_rest_indexed(
        recorded: Store, tmp_path: Path) -> None:
    """Fixture: `recorded`, plus a valid rollout outside the store linked in under a day folder."""
    outside = tmp_path / "outside.jsonl"
    [intact] = (FIXTURES / "intact").glob("**/*.jsonl")
    shutil.copy(intact, outside)
    day = recorded.layout.sessions / "2026" / "01" / "01"
    day.mkdir(parents=True)
    (day / intact.name).symlink_to(outside)
    counts = recorded.rebuild()
    assert counts == {"sessions": 3, "threads": 2, "unindexable": 1}
    assert str(recorded.probe(str(day / intact.name), False)).startswith("unreadable")


@pytest.mark.parametrize("index", ["missing", "healthy"])
def test_rebuild_stores_the_row_each_rollout_gives_on_its_own(recorded: Store, index: str) -> None:
    """Fixture: `recorded`, the rollout fixtures (damaged ones too) copied in; index missing or
    healthy (rebuilt from scratch, or in place)."""
    for n, folder in enumerate(sorted(FIXTURES.iterdir())):
        for rollout in folder.glob("**/*.jsonl"):
            day = recorded.layout.sessions / "2025" / "01" / f"{n + 1:02d}"
            day.mkdir(parents=True, exist_ok=True)
            shutil.copy(rollout, day / rollout.name)
    if index == "missing":
        recorded.layout.index_path.unlink(missing_ok=True)
    else:
        recorded.rebuild()
    counts = recorded.rebuild()
    probed = [recorded.probe(path, archived)
              for path, archived in recorded.layout.scan_rollouts()]
    expected = {r.session_id: r for r in probed if isinstance(r, SessionRow)}  # the last file wins
    stored = {r.session_id: r for r in recorded.index().sessions()}
    assert stored == expected and counts["unindexable"] == sum(
        not isinstance(r, SessionRow) for r in probed)
    assert counts["sessions"] == len(probed) - counts["unindexable"]


def test_a_rebuild_in_place_that_fails_leaves_the_old_index_whole(recorded: Store) -> None:
    """Fixture: `recorded` indexed; a rebuild in place given a row SQLite cannot bind."""
    recorded.rebuild()
    index = recorded.index()
    before = index.sessions()
    unbindable = SessionRow(session_id="s", thread_id="t", path="p", title={"not": "text"})
    with pytest.raises(IndexUnavailable):
        index.replace_all([*before, unbindable])
    assert index.sessions() == before
    db = sqlite3.connect(recorded.layout.index_path)
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    db.close()
    assert set(INDEX_NAMES) <= names


def test_an_empty_pending_marker_names_no_rollout_and_the_listing_goes_on(recorded: Store) -> None:
    """Fixture: `recorded`, plus a pending marker left empty (a kill between its O_TRUNC and its
    write): it resolves to the store root, which is no rollout."""
    (recorded.layout.pending / "00000000-0000-4000-8000-000000000000").write_bytes(b"")
    assert recorded.probe(str(recorded.layout.root), False) == "not a rollout file name"
    assert recorded.catch_up() == []
    assert len(recorded.rebuild()) == 3 and recorded.index().sessions()


def test_a_thread_whose_meta_line_is_longer_than_the_probe_window_survives_a_rebuild(
        store_dir: Path, repo: Path) -> None:
    """Fixture: a thread started with a 100 KB title (its session_meta line is over 64 KiB), then
    the index deleted."""
    session = Keeper(store_dir).start(repo, title="long " + "t" * 100_000)
    session.record({"type": "message", "role": "user", "text": "one"})
    session.close()
    (store_dir / "state.db").unlink()
    store = Store(store_dir)
    assert store.rebuild() == {"sessions": 1, "threads": 1, "unindexable": 0}
    [row] = store.thread_sessions(session.thread_id)
    assert row.last_seq == session.writer.last_seq and row.title is not None
    assert row.title.startswith("long ")


@pytest.mark.parametrize("index", ["rebuilt in place", "deleted"])
def test_a_thread_whose_newest_meta_line_is_damaged_is_still_blocked_after_a_rebuild(
        store_dir: Path, repo: Path, index: str) -> None:
    """Fixture: a thread resumed once (ten messages in the second session); one byte of a text
    field in the second session's meta changed (it still parses, its checksum fails); then the
    index rebuilt in place, or deleted."""
    keeper = Keeper(store_dir)
    first = keeper.start(repo, title="t")
    first.record({"type": "message", "role": "user", "text": "one"})
    first.close()
    _report, second = keeper.resume(first.thread_id, workspace=str(repo))
    assert second is not None
    for n in range(10):
        second.record({"type": "message", "role": "user", "text": f"again {n}"})
    second.close()
    path = Path(second.path)
    meta, rest = path.read_bytes().split(b"\n", 1)
    assert meta.count(b'"source":"resume"') == 1
    path.write_bytes(meta.replace(b'"source":"resume"', b'"source":"resumf"') + b"\n" + rest)
    assert Keeper(store_dir).check_resume(first.thread_id, workspace=str(repo)).verdict == "blocked"
    if index == "deleted":
        (store_dir / "state.db").unlink()
    else:
        Store(store_dir).rebuild()
    report = Keeper(store_dir).check_resume(first.thread_id, workspace=str(repo))
    assert (report.verdict, report.restored_to_seq) != ("ok", first.writer.last_seq), \
        "the damaged newest session was dropped and the thread resumed from the older one"
    assert report.verdict == "blocked"
