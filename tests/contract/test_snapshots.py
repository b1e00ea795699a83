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


def test_damage_before_the_latest_snapshot_is_still_caught_and_blocks(store_dir, repo):
    """Fixture: a closed session (message lines, then a snapshot); one byte of a message changed."""
    keeper = Keeper(store_dir)
    session = keeper.start(repo)
    for i in range(3):
        session.record({"type": "message", "role": "user", "text": f"message {i}"})
    session.close()
    path = session.writer.path
    lines = path.read_bytes().split(b"\n")
    assert b'"type":"snapshot"' in lines[-2]
    target = next(i for i, line in enumerate(lines) if b"message 1" in line)
    lines[target] = lines[target].replace(b"message 1", b"message 7")  # still valid JSON
    path.write_bytes(b"\n".join(lines))
    assert read_latest(path, verify=False).damage == []  # the flat read alone cannot see it
    report = keeper.check_resume(session.thread_id, workspace=str(repo))
    assert report.verdict == "blocked"
    assert [(d["line"], d["kind"]) for d in report.damaged] == [(target + 1, "checksum")]
