"""Snapshots keep resume cost flat without making the log grow quadratically."""

from __future__ import annotations

from sessionkeeper.api import Keeper
from sessionkeeper.store.reader import read_latest, read_rollout


def _sizes(path):
    lines = path.read_bytes().splitlines(keepends=True)
    snapshots = [x for x in lines if b'"type":"snapshot"' in x]
    return sum(map(len, lines)) - sum(map(len, snapshots)), len(snapshots), sum(map(len, lines))


def test_with_compaction_snapshots_add_at_most_the_events_own_size(store_dir, repo):
    """Fixture: 3,000 messages of ~500 B, compacted every 300; snapshots every >=4 KiB."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096)
    session = keeper.start(repo, title="long conversation")
    for i in range(3000):
        session.record({"type": "message", "role": "user", "text": f"{i:05d} " + "x" * 490})
        if i % 300 == 299:
            session.compact(f"summary of the first {i + 1} messages")
    session.close()
    events, snapshots, total = _sizes(session.writer.path)
    assert snapshots >= 10
    assert total <= 2 * events  # reliability.md P5: bytes per event <= 2x


def test_an_uncompacted_growing_context_never_grows_the_log_quadratically(store_dir, repo):
    """Fixture: 3,000 messages of ~500 B in one session; automatic snapshots every >=4 KiB."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096)
    session = keeper.start(repo, title="long conversation")
    for i in range(3000):
        session.record({"type": "message", "role": "user", "text": f"{i:05d} " + "x" * 490})
    session.close()
    events, snapshots, total = _sizes(session.writer.path)
    assert snapshots >= 5
    assert total <= 2.6 * events  # each snapshot follows >= 2x its own size in new events
    assert read_rollout(session.writer.path).status.value == "ok"


def test_resume_reads_only_the_latest_snapshot_and_its_tail(store_dir, repo):
    """Fixture: the same long session; read_latest starts at the last snapshot."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096)
    session = keeper.start(repo)
    for i in range(3000):
        session.record({"type": "message", "role": "user", "text": f"{i:05d} " + "x" * 490})
    session.record({"type": "todo", "items": [{"id": "1", "text": "last", "status": "done"}]})
    session.writer.recorder.flush()
    latest = read_latest(session.writer.path)
    full = read_rollout(session.writer.path)
    assert latest.from_snapshot and latest.records[0]["type"] == "snapshot"
    assert len(latest.records) < len(full.records) // 2
    assert latest.last_seq == full.last_seq
    replayed = keeper.replay(session.thread_id)
    assert replayed.state["todos"].summary()["total"] == 1
    assert len(replayed.state["context"].conversation()) == 3000
    session.close()
