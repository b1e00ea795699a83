"""Reconcile: rollouts the index never heard of are found, listing only directories that changed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import UnknownThread
from sessionkeeper.store import tree
from sessionkeeper.store.store import Store
from sessionkeeper.store.tree import walk_changed

from ..seed import record_seed


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Marks are trusted at once (not only 2 s after their directory last changed)."""
    monkeypatch.setattr(tree, "RACY_NS", 0)


def foreign_rollout(tmp_path: Path, repo: Path) -> tuple[str, Path]:
    """(thread id, rollout path) of a closed session recorded in a store of its own."""
    session = record_seed(Keeper(tmp_path / "elsewhere"), repo, close=True)
    return session.thread_id, Path(session.path)


def copy_beside(rollout: Path, store: Store, thread: str) -> Path:
    """Copy `rollout` into the directory of `thread`'s rollout, directory mtime set back."""
    day = (store.layout.root / store.thread_sessions(thread)[0].path).parent
    before = day.stat()
    copied = day / rollout.name
    shutil.copy2(rollout, copied)
    os.utime(day, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `rsync -a` or `cp -a` do
    return copied


def test_a_rollout_copied_into_a_listed_directory_is_found(tmp_path, store_dir, repo, trusting):
    """Fixture: a store whose tree was reconciled (marks trusted); a rollout of another store
    copied into the same day directory afterwards, that directory's mtime set back."""
    mine = record_seed(Keeper(store_dir), repo, close=True).thread_id
    store = Store(store_dir)
    store.thread_sessions(mine)  # reconciles, and keeps the marks
    assert store.index().tree_marks().dirs
    theirs, rollout = foreign_rollout(tmp_path, repo)
    copy_beside(rollout, store, mine)
    assert [r.thread_id for r in Store(store_dir).thread_sessions(theirs)] == [theirs]


def test_unchanged_directories_are_not_listed_again(tmp_path, store_dir, repo, trusting):
    """Fixture: a reconciled store of one thread; then a rollout copied beside it."""
    mine = record_seed(Keeper(store_dir), repo, close=True).thread_id
    store = Store(store_dir)
    store.thread_sessions(mine)
    marks = store.index().tree_marks().dirs
    assert walk_changed(store.layout, marks).rollouts == []
    theirs, rollout = foreign_rollout(tmp_path, repo)
    copied = copy_beside(rollout, store, mine)
    listed = walk_changed(store.layout, marks).rollouts
    assert str(copied) in [path for path, _ in listed]
    assert len(listed) == 2  # that directory only: the thread's own rollout and the copy


def test_a_directory_changed_within_the_racy_window_is_listed_again(store_dir, repo):
    """Fixture: a store whose only session was just written (its directory changed < 2 s ago)."""
    mine = record_seed(Keeper(store_dir), repo, close=True).thread_id
    store = Store(store_dir)
    store.thread_sessions(mine)
    marks = store.index().tree_marks().dirs
    assert not all(trusted for _, _, trusted in marks.values())
    assert len(walk_changed(store.layout, marks).rollouts) == 1


def test_a_rollout_unreadable_when_listed_is_found_once_it_is_whole(tmp_path, store_dir, repo,
                                                                    trusting):
    """Fixture: a rollout copied in empty (a copy in progress) while the tree was reconciled,
    then written in place (its directory does not change)."""
    mine = record_seed(Keeper(store_dir), repo, close=True).thread_id
    store = Store(store_dir)
    theirs, rollout = foreign_rollout(tmp_path, repo)
    copied = copy_beside(rollout, store, mine)
    data = copied.read_bytes()
    copied.write_bytes(b"")
    with pytest.raises(UnknownThread):
        store.thread_sessions(theirs)
    copied.write_bytes(data)  # same inode: the directory's ctime stays
    assert [r.thread_id for r in store.thread_sessions(theirs)] == [theirs]


def test_rows_forgotten_while_their_rollout_stays_are_found_again(store_dir, repo, trusting):
    """Fixture: a reconciled store; the index forgets a thread whose rollout is still there."""
    mine = record_seed(Keeper(store_dir), repo, close=True).thread_id
    store = Store(store_dir)
    store.thread_sessions(mine)
    store.index().forget(mine)
    assert store.index().tree_marks().dirs == {}
    assert [r.thread_id for r in Store(store_dir).thread_sessions(mine)] == [mine]


def test_a_read_only_store_finds_a_copied_rollout_by_the_saved_marks(tmp_path, store_dir, repo,
                                                                     trusting):
    """Fixture: marks saved by a read-write lookup; a rollout copied in; then a read-only store
    (as `--check-resume` opens it), which lists the changed directory and saves nothing."""
    mine = record_seed(Keeper(store_dir), repo, close=True).thread_id
    store = Store(store_dir)
    store.thread_sessions(mine)
    saved = store.index().tree_marks()
    theirs, rollout = foreign_rollout(tmp_path, repo)
    copy_beside(rollout, store, mine)
    reading = Store(store_dir, read_only=True)
    assert reading.index().tree_marks() == saved
    assert [r.thread_id for r in reading.thread_sessions(theirs)] == [theirs]
    assert Store(store_dir).index().tree_marks() == saved


def test_a_rebuild_keeps_the_marks_of_the_tree_it_listed(tmp_path, store_dir, repo, trusting):
    """Fixture: a store of one thread beside a rollout that cannot be indexed (empty), rebuilt in
    place; then a rollout copied in (its directory's mtime set back)."""
    mine = record_seed(Keeper(store_dir), repo, close=True).thread_id
    store = Store(store_dir)
    day = (store.layout.root / store.thread_sessions(mine)[0].path).parent
    empty = day.parent / "00" / "rollout-20260101T000000000Z-00000000-0000-4000-8000-000000000000.jsonl"
    empty.parent.mkdir()
    empty.write_bytes(b"")
    assert store.rebuild()["unindexable"] == 1
    marks = store.index().tree_marks().dirs
    trusted = {key for key, (_, _, trust) in marks.items() if trust}
    assert store.layout.relative(day) in trusted and store.layout.relative(empty.parent) in marks
    assert store.layout.relative(empty.parent) not in trusted
    assert [path for path, _ in walk_changed(store.layout, marks).rollouts] == [str(empty)]
    theirs, rollout = foreign_rollout(tmp_path, repo)
    copy_beside(rollout, store, mine)
    assert [r.thread_id for r in Store(store_dir).thread_sessions(theirs)] == [theirs]
