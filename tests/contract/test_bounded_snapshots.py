"""Snapshots refer to the log instead of copying it: bounded whatever the history (issue 13)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import OperationConflict
from sessionkeeper.recovery.replay import replay
from sessionkeeper.recovery.subsystems.context import Context
from sessionkeeper.recovery.subsystems.operations import Operations
from sessionkeeper.session.live import Session
from sessionkeeper.store.reader import read_latest, read_rollout


def _snapshots(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().splitlines() if b'"type":"snapshot"' in line[:80]]


def _talk(session: Session, count: int, *, start: int = 0) -> None:
    for i in range(start, start + count):
        session.record({"type": "message", "role": ("user", "assistant")[i % 2],
                        "text": f"message {i:05d} " + "y" * 300})


def test_a_large_message_is_never_copied_into_the_next_snapshot(store_dir: Path, repo: Path) -> None:
    """Fixture: one 2 MB message, then a snapshot and a close (issue 12 item 19, scaled down)."""
    keeper = Keeper(store_dir)
    session = keeper.start(repo)
    session.record({"type": "message", "role": "user", "text": "z" * (2 << 20)})
    session.snapshot()
    session.close()
    assert session.writer.path.stat().st_size < 1.1 * (2 << 20)
    assert all(len(line) < 16 * 1024 for line in _snapshots(session.writer.path))
    conversation = keeper.replay(session.thread_id).state.get(Context).conversation()
    assert [len(m["text"]) for m in conversation] == [2 << 20]


def test_snapshot_size_does_not_grow_with_the_conversation(store_dir: Path, repo: Path) -> None:
    """Fixture: two threads, 300 and 3,000 uncompacted messages; automatic snapshots."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096)
    sizes = []
    for count in (300, 3000):
        session = keeper.start(repo)
        _talk(session, count)
        session.close()
        sizes.append(max(map(len, _snapshots(session.writer.path))))
    assert sizes[1] <= sizes[0] + 1024  # the window is bounded; nothing else grows with messages


def test_the_whole_conversation_comes_back_from_the_log_after_a_crash(store_dir: Path, repo: Path) -> None:
    """Fixture: 500 messages with snapshots, then a kill-like stop (no final snapshot)."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096)
    session = keeper.start(repo)
    _talk(session, 500)
    session.writer.recorder.flush()
    session.writer.recorder.sink.close()
    session.writer._lock.release()
    replayed = keeper.replay(session.thread_id)
    assert replayed.latest.from_snapshot
    texts = [m["text"][:13] for m in replayed.state.get(Context).conversation()]
    assert texts == [f"message {i:05d}" for i in range(500)]
    assert replayed.state.get(Context).summary()["messages"] == 500


def test_conversation_spans_resumed_sessions_and_stops_at_a_clear(store_dir: Path, repo: Path) -> None:
    """Fixture: 100 messages, resume, 100 more, clear, 3 more, resume again."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096)
    session = keeper.start(repo)
    _talk(session, 100)
    session.close()
    _, resumed = keeper.resume(session.thread_id, workspace=str(repo))
    assert resumed is not None
    _talk(resumed, 100, start=100)
    assert len(resumed.state.get(Context).conversation()) == 200  # live: read back from the log
    resumed.clear("fresh start")
    _talk(resumed, 3, start=200)
    resumed.close()
    _, again = keeper.resume(session.thread_id, workspace=str(repo))
    assert again is not None
    assert [m["text"][:13] for m in again.state.get(Context).conversation()] == [
        "message 00200", "message 00201", "message 00202"]
    again.close()


def test_a_fork_at_a_seq_restores_the_parents_conversation_up_to_it(store_dir: Path, repo: Path) -> None:
    """Fixture: 200 messages; a fork at the seq of message 149."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096)
    session = keeper.start(repo)
    _talk(session, 200)
    session.close()
    seqs = [r["seq"] for r in read_rollout(session.writer.path).records if r["type"] == "message"]
    fork = keeper.fork(session.thread_id, at_seq=seqs[149])
    texts = [m["text"][:13] for m in fork.state.get(Context).conversation()]
    fork.close()
    assert texts == [f"message {i:05d}" for i in range(150)]
    reread = keeper.replay(fork.thread_id).state.get(Context).conversation()
    assert len(reread) == 150  # the forked thread reads the parent's log up to the fork


def test_a_redelivered_message_id_counts_once_after_a_restore(store_dir: Path, repo: Path) -> None:
    """Fixture: message m-1, 300 messages, a crash; m-1 again after the resume."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096)
    session = keeper.start(repo)
    session.record({"type": "message", "role": "user", "text": "first", "message_id": "m-1"})
    _talk(session, 300)
    session.close()
    _, resumed = keeper.resume(session.thread_id, workspace=str(repo))
    assert resumed is not None
    resumed.record({"type": "message", "role": "user", "text": "first", "message_id": "m-1"})
    context = resumed.state.get(Context)
    assert context.summary()["messages"] == 301
    assert [m["text"] for m in context.conversation()].count("first") == 1
    resumed.close()


def test_a_large_operation_result_is_reused_from_the_log_after_a_resume(store_dir: Path, repo: Path) -> None:
    """Fixture: a committed operation with a 100 KB result; the session closed and resumed."""
    keeper = Keeper(store_dir)
    session = keeper.start(repo)
    result = {"out": "r" * 100_000, "exit": 0}
    session.begin_operation("op-big", "shell", {"cmd": "make"})
    session.finish_operation("op-big", result=result)
    session.close()
    assert all(len(line) < 8192 for line in _snapshots(session.writer.path))
    _, resumed = keeper.resume(session.thread_id, workspace=str(repo))
    assert resumed is not None
    ticket = resumed.begin_operation("op-big", "shell", {"cmd": "make"})
    resumed.close()
    assert (ticket.action, ticket.result) == ("reuse", result)


def test_a_snapshot_of_the_older_format_still_restores_its_messages() -> None:
    """Fixture: a schema-2 context snapshot holding every message after its summary."""
    old = {"summary": {"text": "S", "through_seq": 2, "seq": 3},
           "messages": [{"seq": 4, "role": "user", "text": "a", "message_id": "m4"},
                        {"seq": 5, "role": "assistant", "text": "b", "message_id": None}]}
    context = Context()
    context.restore(orjson.loads(orjson.dumps(old)))
    assert [(m["text"], m["summary"]) for m in context.conversation()] == [
        ("S", True), ("a", False), ("b", False)]
    context.apply({"seq": 6, "type": "message", "role": "user", "text": "a", "message_id": "m4"})
    assert context.summary() == {"compacted_through_seq": 2, "messages": 2}


def test_a_resume_reads_only_a_small_window_of_a_long_uncompacted_thread(store_dir: Path, repo: Path) -> None:
    """Fixture: 3,000 uncompacted messages; read_latest of the closed session."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096)
    session = keeper.start(repo)
    _talk(session, 3000)
    session.close()
    latest = read_latest(session.writer.path)
    assert latest.from_snapshot
    assert len(orjson.dumps(latest.records[0])) < 40_000


def test_a_thread_replayed_without_its_store_reads_only_what_was_read(store_dir: Path,
                                                                     repo: Path) -> None:
    """Fixture: 300 messages with snapshots; replayed from a full read and from a window."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096)
    session = keeper.start(repo)
    _talk(session, 300)
    session.close()
    full = replay([read_rollout(session.writer.path)])
    assert len(full.state.get(Context).conversation()) == 300
    window = replay([read_latest(session.writer.path)])
    with pytest.raises(LookupError):  # the earlier messages are on disk, never silently missing
        window.state.get(Context).conversation()


def _operations(session: Session, count: int, *, start: int = 0) -> None:
    for i in range(start, start + count):
        session.begin_operation(f"op-{i}", "shell", {"cmd": f"pytest -k case{i}"})
        session.finish_operation(f"op-{i}", result={"exit": 0, "out": f"ok {i}"})


def test_snapshot_size_grows_by_a_fingerprint_per_finished_operation(store_dir: Path,
                                                                       repo: Path) -> None:
    """Fixture: two threads of 400 and 4,000 finished operations; automatic snapshots."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096, durability="none")
    sizes = []
    for count in (400, 4000):
        session = keeper.start(repo)
        _operations(session, count)
        session.snapshot()
        session.close()
        sizes.append(len(_snapshots(session.writer.path)[-1]))
    assert sizes[1] - sizes[0] <= 12 * 3600  # 8 bytes of base64 per archived operation, no more


def test_an_old_operation_is_reused_or_refused_after_a_resume(store_dir: Path, repo: Path) -> None:
    """Fixture: 1,000 finished operations, the session closed, resumed in a new Keeper."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096, durability="none")
    session = keeper.start(repo)
    _operations(session, 1000)
    session.close()
    _, resumed = Keeper(store_dir).resume(session.thread_id, workspace=str(repo))
    assert resumed is not None
    ticket = resumed.begin_operation("op-3", "shell", {"cmd": "pytest -k case3"})
    assert (ticket.action, ticket.result) == ("reuse", {"exit": 0, "out": "ok 3"})
    with pytest.raises(OperationConflict):
        resumed.begin_operation("op-4", "shell", {"cmd": "rm -rf /"})
    again = resumed.record({"type": "operation", "operation_id": "op-5", "tool": "shell",
                            "status": "committed", "result": {"exit": 0, "out": "ok 5"}})
    assert again.duplicate
    resumed.close()


def test_a_replay_from_the_snapshot_equals_a_replay_of_every_record(store_dir: Path,
                                                                    repo: Path) -> None:
    """Fixture: 700 finished operations, one left started; read latest and read whole."""
    keeper = Keeper(store_dir, snapshot_min_bytes=4096, durability="none")
    session = keeper.start(repo)
    _operations(session, 700)
    session.begin_operation("op-doubt", "shell", {"cmd": "deploy"})
    _operations(session, 50, start=700)
    session.close()
    latest, whole = keeper.replay(session.thread_id), keeper.replay(session.thread_id, full=True)
    assert latest.latest.from_snapshot and not whole.latest.from_snapshot
    assert latest.state.get(Operations).snapshot() == whole.state.get(Operations).snapshot()
    assert latest.state.get(Operations).counts()["total"] == 751
