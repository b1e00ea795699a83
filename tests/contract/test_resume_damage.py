"""The recovery contract on a damaged or crafted log: a torn tail quarantined, never one a live
writer is still writing; damage in the middle, a crafted baseline or snapshot blocks, never a
traceback (fixtures: `seeded` in conftest.py, or a session of the seed's story)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.store.reader import read_rollout

from ..conftest import git
from ..seed import crash, record_seed


def test_torn_tail_restores_to_the_last_complete_event_and_quarantines(seeded, repo):
    """Fixture: seeded; the last line truncated mid-way."""
    keeper, thread, session = seeded
    path = session.writer.path
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: last_start + 25])
    dry = keeper.check_resume(thread, workspace=str(repo))
    assert dry.verdict == "ok" and dry.restored_to_seq == session.writer.last_seq - 1
    assert dry.in_doubt_operations == []  # the op's `started` line was the torn one
    assert [q["bytes"] for q in dry.quarantined] == [25]
    report, resumed = keeper.resume(thread, workspace=str(repo))
    assert report.quarantined[0]["action"] == "quarantined"
    assert Path(report.quarantined[0]["path"]).read_bytes() == data[last_start: last_start + 25]
    assert read_rollout(path).tail is None
    resumed.close()


def test_middle_damage_blocks_with_the_line_number(seeded, repo):
    """Fixture: seeded; garbage written over line 4 of the rollout."""
    keeper, thread, session = seeded
    path = session.writer.path
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3][:10] + b"XXXX" + lines[3][14:]
    path.write_bytes(b"\n".join(lines))
    report = keeper.check_resume(thread, workspace=str(repo))
    assert report.verdict == "blocked"
    assert [(d["line"], d["kind"]) for d in report.damaged] == [(4, "checksum")]


def test_resume_never_cuts_a_line_a_live_writer_is_still_writing(store_dir, repo):
    """Fixture: a live seed session whose last line is half-written (in flight) by its writer."""
    from sessionkeeper.errors import ThreadBusy

    session = record_seed(Keeper(store_dir), repo)
    with open(session.writer.path, "ab") as handle:  # the writer's next line, half way through
        handle.write(b'{"seq":99,"ts":"2026-11-29T10:00:00.000Z","type":"mess')
    before = session.writer.path.read_bytes()
    with pytest.raises(ThreadBusy):
        Keeper(store_dir).resume(session.thread_id, workspace=str(repo))
    assert session.writer.path.read_bytes() == before
    assert list((store_dir / "quarantine").iterdir()) == []


def test_two_torn_tails_at_the_same_offset_are_both_kept(store_dir, repo):
    """Fixture: a crashed seed session torn twice at the same offset (two crashes, two resumes)."""
    from sessionkeeper.store.quarantine import quarantine_tail
    from sessionkeeper.store.reader import read_rollout
    from sessionkeeper.store.store import Store

    session = record_seed(Keeper(store_dir), repo)
    crash(session)
    store = Store(store_dir)
    for torn in (b'{"seq":9,"first crash', b'{"seq":9,"second'):
        with open(session.writer.path, "ab") as handle:
            handle.write(torn)
        quarantine_tail(store.layout, read_rollout(session.writer.path))
    kept = sorted(p.read_bytes() for p in (store_dir / "quarantine").iterdir())
    assert kept == [b'{"seq":9,"first crash', b'{"seq":9,"second']


def test_quarantine_uses_the_file_as_it_is_under_the_lock_not_a_stale_read(store_dir, repo):
    """Fixture: a crashed seed session with a torn tail, read; then another writer repaired it
    and appended acknowledged records before the quarantine took the lock."""
    from sessionkeeper.store.quarantine import quarantine_tail
    from sessionkeeper.store.reader import read_rollout
    from sessionkeeper.store.store import Store

    keeper = Keeper(store_dir)
    session = record_seed(keeper, repo)
    crash(session)
    intact = session.writer.path.read_bytes()
    session.writer.path.write_bytes(intact + b'{"seq":9,"torn')
    stale = read_rollout(session.writer.path)
    assert stale.tail is not None
    later = keeper.attach(session.session_id)  # quarantines the tail itself, then appends
    later.record({"type": "message", "role": "user", "text": "acknowledged later"})
    later.writer.recorder.close()
    later.writer._lock.release()
    grown = session.writer.path.read_bytes()
    assert quarantine_tail(Store(store_dir).layout, stale) is None
    assert session.writer.path.read_bytes() == grown
    assert read_rollout(session.writer.path).records[-1]["text"] == "acknowledged later"


@pytest.mark.parametrize("baseline", [{"identity": "not an object"}, {"identity": [1]},
                                      {"identity": {"root_commits": "abc", "bogus": 1}}])
def test_a_crafted_unreadable_baseline_blocks_the_resume_never_a_traceback(store_dir, repo,
                                                                           baseline):
    """Fixture: a session in `repo` whose rollout gained a `baseline` record with a valid
    checksum but a malformed identity (a crafted or foreign file): the check and the resume say
    blocked (baseline_unreadable) instead of raising ValueError."""
    import orjson

    from sessionkeeper.store.codec import frame

    keeper = Keeper(store_dir)
    session = keeper.start(repo)
    session.close()
    with open(session.writer.path, "ab") as handle:
        handle.write(frame(session.writer.last_seq + 1, b"2026-12-01T00:00:00.000Z",
                           orjson.dumps({"type": "baseline", "branch": "fix/payment",
                                         **baseline})))
    report = keeper.check_resume(session.thread_id, workspace=str(repo))
    assert report.verdict == "blocked"
    assert [d.kind for d in report.differences] == ["baseline_unreadable"]
    resumed, again = keeper.resume(session.thread_id, workspace=str(repo), decision="continue")
    assert resumed.verdict == "blocked" and again is None


def test_a_crafted_baseline_with_paths_of_the_wrong_type_blocks_never_a_traceback(store_dir,
                                                                                  repo):
    """Fixture: a session in `repo` whose rollout gained a checksum-valid `baseline` record of
    the same repository (its root commit) whose worktree is a number and repo_root a list: the
    check says baseline_unreadable (blocked) instead of raising TypeError."""
    import orjson

    from sessionkeeper.store.codec import frame

    keeper = Keeper(store_dir)
    session = keeper.start(repo)
    session.close()
    root = git(repo, "rev-list", "--max-parents=0", "HEAD")
    with open(session.writer.path, "ab") as handle:
        handle.write(frame(session.writer.last_seq + 1, b"2026-12-01T00:00:00.000Z",
                           orjson.dumps({"type": "baseline", "worktree": 5, "repo_root": [1],
                                         "identity": {"root_commits": [root]},
                                         "branch": "fix/payment"})))
    report = keeper.check_resume(session.thread_id, workspace=str(repo))
    assert report.verdict == "blocked"
    assert [d.kind for d in report.differences] == ["baseline_unreadable"]


def test_a_snapshot_whose_worktree_state_is_crafted_blocks_never_a_traceback(store_dir, repo):
    """Fixture: a session in `repo` whose snapshot (written by the session itself, so every
    integrity check passes) holds a worktree state with a cwd that is a number, as a crafted
    file could: the check says baseline_unreadable (blocked) instead of raising TypeError."""
    keeper = Keeper(store_dir)
    session = keeper.start(repo)
    session.state["worktree"].state["cwd"] = 5
    session.snapshot()
    session.writer.close()  # not Session.close: that would snapshot the state once more
    report = keeper.check_resume(session.thread_id, workspace=str(repo))
    assert report.verdict == "blocked"
    assert [d.kind for d in report.differences] == ["baseline_unreadable"]
