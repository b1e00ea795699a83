"""What a session refuses, computes or keeps when a caller records (the hardening findings)."""

from __future__ import annotations

import enum
import hashlib
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import InvalidEvent, OperationConflict, StoreFull
from sessionkeeper.store.reader import read_rollout

from ..conftest import git


@pytest.fixture
def session(store_dir: Path, repo: Path):
    """A started session in `repo` (git repo on fix/payment)."""
    with Keeper(store_dir).start(repo, title="rules") as opened:
        yield opened


def test_an_operation_rebegun_with_other_arguments_is_a_conflict_and_nothing_is_reused(session):
    """Fixture: `session`; op-1 committed for staging, then begun again for production."""
    assert session.begin_operation("op-1", "shell", {"cmd": "make deploy staging"}).action == "run"
    session.finish_operation("op-1", result={"exit": 0})
    with pytest.raises(OperationConflict, match="other arguments"):
        session.begin_operation("op-1", "shell", {"cmd": "make deploy production"})
    with pytest.raises(OperationConflict):
        session.record({"type": "operation", "operation_id": "op-1", "tool": "shell",
                        "status": "started", "args": {"cmd": "make deploy production"}})
    ops = session.state["operations"].summary()
    assert ops["duplicates"] == 0 and ops["total"] == 1
    again = session.begin_operation("op-1", "shell", {"cmd": "make deploy staging"})
    assert again.action == "reuse" and again.result == {"exit": 0}


def test_failed_after_committed_is_refused(session):
    """Fixture: `session`; op-2 committed, then reported failed."""
    session.begin_operation("op-2", "shell")
    session.finish_operation("op-2")
    with pytest.raises(InvalidEvent, match="already committed"):
        session.finish_operation("op-2", ok=False)


@pytest.mark.parametrize(("event", "why"), [
    ({"type": "verifier", "kind": "tests", "passed": 9, "total": 7}, "between 0 and total"),
    ({"type": "verifier", "kind": "tests"}, "needs both passed and total"),
    ({"type": "todo", "items": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]}, "unique"),
    ({"type": "compacted", "summary": "s", "through_seq": -1}, "negative"),
    ({"type": "compacted", "summary": "s", "through_seq": 10**6}, "beyond the thread"),
    ({"type": "permissions", "approval_mode": "bogus"}, "approval_mode"),
    ({"type": "message", "role": "user", "text": "x" * 3, "extra": 1}, "extra"),
])
def test_nonsense_is_rejected_with_the_reason(session, event, why):
    """Fixture: `session`; one nonsensical record each."""
    with pytest.raises(InvalidEvent, match=why):
        session.record(event)


def test_start_refuses_an_unknown_approval_mode(store_dir, repo):
    """Fixture: `repo`; start with approval_mode bogus."""
    with pytest.raises(InvalidEvent, match="approval_mode"):
        Keeper(store_dir).start(repo, permissions={"approval_mode": "bogus"})


def test_a_file_change_without_hash_means_read_the_file_now(session, repo):
    """Fixture: `session`; payment.py edited, recorded without hashes; then deleted."""
    (repo / "payment.py").write_text("def charge(amount):\n    return round(amount, 2)\n")
    session.record({"type": "file_change", "path": "payment.py", "author": "agent"})
    last = session.state["file_history"].last("payment.py")
    assert last["hash"] == hashlib.sha256((repo / "payment.py").read_bytes()).hexdigest()
    report = Keeper(session.writer.store.layout.root).check_resume(
        session.thread_id, workspace=str(repo))
    assert not [d for d in report.differences if d.kind.startswith("file_")]
    (repo / "payment.py").unlink()
    session.record({"type": "file_change", "path": "payment.py"})
    assert session.state["file_history"].last("payment.py")["hash"] is None


def test_a_baseline_without_fields_is_captured_not_taken_as_outside_git(session, repo, store_dir):
    """Fixture: `session`; the agent commits, then records {"type": "baseline"}."""
    (repo / "new.py").write_text("x = 1\n")
    git(repo, "add", "new.py")
    git(repo, "commit", "-q", "-m", "agent commit")
    session.record({"type": "baseline"})
    report = Keeper(store_dir).check_resume(session.thread_id, workspace=str(repo))
    assert report.verdict == "ok", report.differences


def test_a_failing_automatic_snapshot_never_turns_a_written_record_into_an_error(store_dir, repo):
    """Fixture: a session snapshotting after every record; the snapshot's write fails once."""
    keeper = Keeper(store_dir, snapshot_min_bytes=1)
    with keeper.start(repo) as session:
        writer = session.writer
        real = writer.append

        def failing(bodies, durability=None, *, reindex=False):
            if b'"type":"snapshot"' in bodies[0]:
                raise StoreFull("no space for the snapshot")
            return real(bodies, durability, reindex=reindex)

        writer.append = failing
        ack = session.record({"type": "message", "role": "user", "text": "kept"})
        writer.append = real
    records = read_rollout(writer.path).records
    assert [r["seq"] for r in records if r.get("text") == "kept"] == [ack.seq]


def test_a_framework_thread_keeps_its_agent_name_and_chosen_id_across_a_resume(store_dir, repo):
    """Fixture: `repo`; a thread started for agent "langgraph" with a chosen id, resumed."""
    keeper = Keeper(store_dir)
    chosen = "12345678-1234-4234-8234-123456789abc"
    keeper.start(repo, agent="langgraph", thread_id=chosen).close()
    with pytest.raises(InvalidEvent, match="taken"):
        keeper.start(repo, thread_id=chosen)
    _, resumed = keeper.resume(chosen, workspace=str(repo))
    assert resumed is not None
    resumed.close()
    rows = keeper.rows()
    assert [(r.thread_id, r.agent, r.session_count) for r in rows] == [(chosen, "langgraph", 2)]


def test_a_file_under_a_symlinked_workspace_path_is_the_workspace_file(store_dir, repo, tmp_path):
    """Fixture: `repo` opened through a symlink; a change named by its absolute symlinked path."""
    link = tmp_path / "link"
    link.symlink_to(repo)
    with Keeper(store_dir).start(link) as session:
        session.record({"type": "file_change", "path": str(link / "payment.py")})
        assert session.state["file_history"].last("payment.py") is not None
        with pytest.raises(InvalidEvent, match="outside the workspace"):
            session.record({"type": "file_change", "path": str(tmp_path / "elsewhere.py")})


@pytest.mark.parametrize("level", ["written", "durable"])
def test_a_redelivery_acknowledged_as_written_finds_its_first_delivery_on_disk(session, level):
    """Fixture: `session`; op-b started with durability none (buffered), then delivered again
    asking for `level`: the duplicate's ack is exactly true, the file holds the record."""
    started = {"type": "operation", "operation_id": "op-b", "tool": "shell", "status": "started"}
    first = session.record(started, durability="none")
    assert b'"op-b"' not in Path(session.path).read_bytes()  # still in the process's buffer
    again = session.record(dict(started), durability=level)
    assert (again.seq, again.duplicate, again.durability.value) == (first.seq, True, level)
    assert b'"op-b"' in Path(session.path).read_bytes()


def test_two_final_statuses_of_one_operation_in_one_batch_are_refused_and_nothing_written(
        session):
    """Fixture: `session`; one record_many saying op-c committed and failed."""
    before = session.writer.last_seq
    with pytest.raises(InvalidEvent, match="already committed"):
        session.record_many([
            {"type": "operation", "operation_id": "op-c", "tool": "shell", "status": "committed"},
            {"type": "operation", "operation_id": "op-c", "tool": "shell", "status": "failed"}])
    assert session.writer.last_seq == before
    assert session.state["operations"].entry("op-c") is None


class _Kind(str, enum.Enum):
    """Record types as a harness may name them: a (str, Enum), whose str() is `_Kind.OPERATION`."""

    OPERATION = "operation"


class _Liar(str):
    """A crafted string: hashes and compares unlike the text orjson writes for it."""

    def __hash__(self) -> int:
        return 1

    def __eq__(self, other: object) -> bool:
        return False


def test_an_operation_typed_by_a_str_enum_is_deduplicated_and_checked_like_any(session):
    """Fixture: `session`; op-e recorded with type `_Kind.OPERATION`, delivered again, then once
    more with other arguments."""
    started = {"type": _Kind.OPERATION, "operation_id": "op-e", "tool": "shell",
               "status": "started", "args": {"cmd": "make deploy"}}
    first = session.record(dict(started))
    again = session.record(dict(started))
    assert (again.seq, again.duplicate) == (first.seq, True)
    with pytest.raises(OperationConflict):
        session.record({**started, "args": {"cmd": "make destroy"}})
    assert session.writer.last_seq == first.seq
    assert Path(session.path).read_bytes().count(b'"op-e"') == 1


@pytest.mark.parametrize("forged", [{"type": "snapshot", "through_seq": 0, "state": {}},
                                    {"type": "lifecycle", "source": "clear", "reason": "forged"}])
def test_a_keeper_type_named_by_a_crafted_string_is_still_refused(session, forged):
    """Fixture: `session`; a well-formed keeper record whose type is a str subclass lying about
    its hash (orjson writes its text)."""
    before = session.writer.last_seq
    with pytest.raises(InvalidEvent, match="written by Session Keeper itself"):
        session.record({**forged, "type": _Liar(forged["type"])})
    assert session.writer.last_seq == before


def test_a_path_with_backslashes_is_read_and_keyed_as_file_history_keys_it(session, repo):
    """Fixture: `session`; file history takes `\\` for a separator (`norm_path`): a path that
    climbs out that way is refused, and `sub\\\\x.py` is the file sub/x.py."""
    before = session.writer.last_seq
    with pytest.raises(InvalidEvent, match="outside the workspace"):
        session.record_file("x\\..\\..\\evil.txt", content=b"owned\n")
    assert session.writer.last_seq == before
    (repo / "sub").mkdir()
    (repo / "sub" / "x.py").write_text("x = 1\n")
    session.record({"type": "file_change", "path": "sub\\x.py"})
    version = session.state["file_history"].last("sub/x.py")
    assert version is not None
    assert version["hash"] == hashlib.sha256(b"x = 1\n").hexdigest()
    assert list(session.state["file_history"].files) == ["sub/x.py"]
