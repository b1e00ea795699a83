"""The recovery contract on the seed's story: exact verdicts and reports for each fault (a damaged
or crafted log: test_resume_damage.py; the `seeded` fixture: conftest.py)."""

from __future__ import annotations

import shutil
import time

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.recovery.lifecycle import Hook
from sessionkeeper.recovery.subsystems import REGISTRY
from sessionkeeper.store.reader import read_rollout

from ..conftest import git, init_repo
from ..seed import crash, record_seed, redate


def test_identical_environment_resumes_ok_with_every_state_restored(seeded, repo):
    """Fixture: seeded (crashed seed session, same branch, same files)."""
    keeper, thread, _ = seeded
    report = keeper.check_resume(thread, workspace=str(repo))
    assert report.verdict == "ok"
    assert report.differences == [] and report.invalidated == []
    state = {name: sub.summary for name, sub in report.subsystems.items()}
    assert (state["todos"]["done"], state["todos"]["total"]) == (1, 3)
    assert (state["verifier"]["tests"]["passed"], state["verifier"]["tests"]["total"]) == (7, 9)
    assert report.rerun_verifier is False
    assert state["cost"]["total"]["usd"] == pytest.approx(0.042)
    assert state["permissions"] == {"approval_mode": "on-request",
                                    "sandbox_policy": "workspace-write", "tool_profile": "coding"}
    assert state["model"]["effective"] == "gpt-5"
    assert state["attribution"]["agent"] == ["payment.py", "test_payment.py"]
    assert set(report.subsystems) == set(REGISTRY)  # every registered subsystem is reported
    assert [o["operation_id"] for o in report.in_doubt_operations] == ["op-deploy-1"]


def test_check_resume_changes_nothing_on_disk(seeded, store_dir, repo):
    """Fixture: seeded; every file under the store is byte-identical after a dry run."""
    keeper, thread, _ = seeded
    before = {p: p.read_bytes() for p in store_dir.rglob("*.jsonl")}
    keeper.check_resume(thread, workspace=str(repo))
    assert {p: p.read_bytes() for p in store_dir.rglob("*.jsonl")} == before


def test_resume_reports_drift_when_branch_changed_and_nothing_continues(seeded, repo):
    """Fixture: seeded, then `git checkout main` (the files differ there too)."""
    keeper, thread, _ = seeded
    git(repo, "stash", "-q")
    git(repo, "checkout", "-q", "main")
    report, session = keeper.resume(thread, workspace=str(repo))
    assert report.verdict == "drift" and session is None and not report.continued
    assert [d.kind for d in report.differences] == ["branch", "file_changed", "file_changed"]
    assert (report.differences[0].recorded, report.differences[0].current) == ("fix/payment", "main")
    assert report.switch_back == "git checkout fix/payment"
    assert report.choices == ["continue", "switch_back", "fork", "cancel"]
    assert report.rerun_verifier is True


def test_drift_continues_only_with_an_explicit_decision(seeded, repo, store_dir):
    """Fixture: seeded, branch switched; decision continue starts a resumed session."""
    keeper, thread, old = seeded
    git(repo, "checkout", "-q", "-b", "other")
    report, session = keeper.resume(thread, workspace=str(repo), decision="continue")
    assert report.verdict == "drift" and report.continued
    assert session.thread_id == thread and session.writer.meta["resumed_from"] == old.session_id
    records = read_rollout(session.writer.path).records
    assert records[0]["type"] == "lifecycle" and records[0]["decision"] == "continue"
    assert records[1]["type"] == "snapshot"
    session.close()


def test_fork_decision_makes_a_new_thread_pointing_at_the_old(seeded, repo):
    """Fixture: seeded, branch switched; decision fork."""
    keeper, thread, old = seeded
    git(repo, "checkout", "-q", "-b", "experiment")
    report, session = keeper.resume(thread, workspace=str(repo), decision="fork")
    assert report.new_thread_id == session.thread_id != thread
    assert session.writer.meta["forked_from"] == {"thread_id": thread,
                                                  "session_id": old.session_id,
                                                  "seq": report.restored_to_seq}
    assert session.summary()["todos"] == {"done": 1, "total": 3}
    session.close()


def test_cwd_deleted_blocks(seeded, repo):
    """Fixture: seeded, then the repository directory removed."""
    keeper, thread, _ = seeded
    shutil.rmtree(repo)
    report = keeper.check_resume(thread, workspace=str(repo))
    assert report.verdict == "blocked"
    assert [d.kind for d in report.differences] == ["cwd_missing"]
    assert report.choices == ["relocate", "fork", "export"]
    assert report.relocate_to is None


def test_a_renamed_repository_is_found_and_offered_for_relocation(seeded, repo, tmp_path):
    """Fixture: seeded; the repository renamed next to where it was; resumed from the old path."""
    keeper, thread, _ = seeded
    renamed = tmp_path / "repo-a-renamed"
    shutil.move(repo, renamed)
    report = keeper.check_resume(thread, workspace=str(repo))
    assert report.verdict == "blocked" and report.relocate_to == str(renamed)
    moved, session = keeper.resume(thread, workspace=str(repo), decision="relocate")
    assert moved.verdict == "drift" and [d.kind for d in moved.differences] == ["relocated"]
    assert session is not None and session.writer.meta["cwd"] == str(renamed)
    session.close()


def test_relocating_continues_over_no_other_drift_than_the_relocation(seeded, repo, tmp_path):
    """Fixture: seeded (branch fix/payment); the repository renamed and, there, main checked out;
    the user accepts the relocation the blocked check offered: the branch change at the new
    place was never accepted, so nothing continues and the report shows it."""
    keeper, thread, _ = seeded
    renamed = tmp_path / "repo-a-renamed"
    shutil.move(repo, renamed)
    git(renamed, "checkout", "-q", "main")
    assert keeper.check_resume(thread, workspace=str(repo)).relocate_to == str(renamed)
    moved, session = keeper.resume(thread, workspace=str(repo), decision="relocate")
    assert session is None
    assert moved.verdict == "drift" and [d.kind for d in moved.differences] == [
        "relocated", "branch"]
    here, session = keeper.resume(thread, workspace=str(renamed), decision="relocate")
    assert session is None and here.verdict == "drift"
    accepted, session = keeper.resume(thread, workspace=str(renamed), decision="continue")
    assert session is not None and accepted.continued
    session.close()


def test_other_repository_blocks(seeded, tmp_path):
    """Fixture: seeded; resume attempted from an unrelated repository."""
    keeper, thread, _ = seeded
    other = init_repo(tmp_path / "repo-b", {"x": "x"}, message="unrelated")
    report = keeper.check_resume(thread, workspace=str(other))
    assert report.verdict == "blocked"
    assert [d.kind for d in report.differences] == ["other_repository"]


def test_moved_repository_is_offered_as_relocation_not_adopted(seeded, repo, tmp_path):
    """Fixture: seeded; the repository moved to another path (same identity)."""
    keeper, thread, _ = seeded
    moved = tmp_path / "moved-repo"
    shutil.move(repo, moved)
    report, session = keeper.resume(thread, workspace=str(moved))
    assert report.verdict == "drift" and session is None
    assert [d.kind for d in report.differences] == ["relocated"]


def test_file_edited_outside_the_agent_makes_the_verifier_stale(seeded, repo):
    """Fixture: seeded; payment.py edited by hand afterwards."""
    keeper, thread, _ = seeded
    (repo / "payment.py").write_text("def charge(amount):\n    return amount  # by hand\n")
    report = keeper.check_resume(thread, workspace=str(repo))
    assert report.verdict == "drift"
    assert [(d.kind, d.recorded["path"]) for d in report.differences] == [
        ("file_changed", "payment.py")]
    assert report.rerun_verifier is True
    assert any(i.subsystem == "verifier" and "payment.py" in i.reason for i in report.invalidated)


def test_lost_index_is_rebuilt_with_the_same_verdict(seeded, repo, store_dir):
    """Fixture: seeded; state.db deleted."""
    keeper, thread, _ = seeded
    before = keeper.check_resume(thread, workspace=str(repo)).to_json()
    (store_dir / "state.db").unlink()
    fresh = Keeper(store_dir)
    assert [t.thread_id for t in fresh.rows()] == [thread]
    assert fresh.check_resume(thread, workspace=str(repo)).to_json() == before


def test_redelivered_operation_is_not_repeated_and_reported_as_duplicate(store_dir, repo):
    """Fixture: a seed session whose deploy operation committed, then was delivered again."""
    keeper = Keeper(store_dir)
    session = record_seed(keeper, repo)
    effects = []
    effects.append("deployed")
    first = session.finish_operation("op-deploy-1", result={"exit": 0})
    again = session.record({"type": "operation", "operation_id": "op-deploy-1", "tool": "shell",
                            "status": "committed", "result_persisted": True,
                            "result": {"exit": 0}})
    assert again.duplicate and again.seq == first.seq
    ticket = session.begin_operation("op-deploy-1", "shell", {"cmd": "make deploy-staging"})
    if ticket.action == "run":
        effects.append("deployed")
    assert ticket.action == "reuse" and ticket.result == {"exit": 0}
    assert effects == ["deployed"]
    crash(session)
    path = session.writer.path
    lines = path.read_bytes().splitlines(keepends=True)
    committed = next(x for x in lines if b'"status":"committed"' in x)
    path.write_bytes(b"".join(lines) + committed)  # the log itself receives it twice
    report = keeper.check_resume(session.thread_id, workspace=str(repo))
    assert report.verdict == "ok" and report.in_doubt_operations == []
    assert [(d["operation_id"], d["seq"]) for d in report.duplicate_operations] == [
        ("op-deploy-1", first.seq)]
    assert keeper.replay(session.thread_id).state["operations"].counts()["committed"] == 1


@pytest.mark.parametrize("behaviour", ["raise", "hang"])
def test_a_failing_hook_is_recorded_and_never_changes_the_verdict(seeded, repo, behaviour):
    """Fixture: seeded; a resume hook that raises or hangs past its timeout."""
    keeper, thread, _ = seeded

    def bad(context):
        if behaviour == "raise":
            raise RuntimeError("hook exploded")
        time.sleep(5)

    keeper.hooks.add(Hook("bad", {"resume"}, order=1, fn=bad, timeout_s=0.2))
    keeper.hooks.add(Hook("good", {"resume"}, order=2, fn=lambda c: "loaded project notes"))
    report, session = keeper.resume(thread, workspace=str(repo))
    assert report.verdict == "ok" and report.continued
    assert [f["hook"] for f in report.hook_failures] == ["bad"]
    assert report.hook_context == ["loaded project notes"]
    session.close()


def test_permissions_changed_between_runs_is_drift(seeded, repo):
    """Fixture: seeded; the client now asks for full-auto approval."""
    keeper, thread, _ = seeded
    report = keeper.check_resume(thread, workspace=str(repo), requested={
        "permissions": {"approval_mode": "full-auto", "sandbox_policy": "workspace-write",
                        "tool_profile": "coding"}})
    assert report.verdict == "drift"
    assert [d.kind for d in report.differences] == ["permissions"]
    assert report.subsystems["permissions"].summary["approval_mode"] == "on-request"  # restored, not guessed


def test_compacted_history_restores_the_summary_not_the_replaced_messages(store_dir, repo):
    """Fixture: a seed session compacted, then one more message."""
    keeper = Keeper(store_dir)
    session = record_seed(keeper, repo)
    session.compact("user wants rounding fixed; payment.py edited; 7/9 tests pass")
    session.record({"type": "message", "role": "user", "text": "now add the test"})
    crash(session)
    replayed = keeper.replay(session.thread_id)
    conversation = replayed.state["context"].conversation()
    assert [m.get("text") for m in conversation][-1] == "now add the test"
    assert sum("rounding fixed" in (m.get("text") or "") for m in conversation) == 1
    assert not any(m.get("text") == "fix the rounding bug" for m in conversation)


def test_clear_keeps_cost_model_and_permissions(store_dir, repo):
    """Fixture: a seed session cleared."""
    keeper = Keeper(store_dir)
    session = record_seed(keeper, repo)
    session.clear("user asked for a fresh start")
    state = session.state
    assert state["context"].conversation() == []
    assert state["cost"].totals()["usd"] == pytest.approx(0.042)
    assert state["permissions"].current()["tool_profile"] == "coding"
    assert state["model"].summary()["effective"] == "gpt-5"
    session.close()


def test_idle_reset_policy_clears_the_context_but_keeps_the_rest(seeded, repo, store_dir):
    """Fixture: seeded, its records re-dated to 2020; resumed with reset policy `idle`."""
    keeper, thread, session = seeded
    redate(session.writer.path)
    report, resumed = Keeper(store_dir, reset_policy="idle").resume(thread, workspace=str(repo))
    assert report.reset is not None and report.reset.startswith("idle for")
    assert resumed.state["context"].conversation() == []
    assert resumed.summary()["todos"] == {"done": 1, "total": 3}
    assert resumed.state["cost"].totals()["usd"] == pytest.approx(0.042)
    resumed.close()
    plain, again = Keeper(store_dir).resume(thread, workspace=str(repo))
    assert plain.reset is None  # the default policy is none
    again.close()


def test_an_operation_delivered_twice_in_one_batch_is_written_once(store_dir, repo):
    """Fixture: a seed session; one record_many carrying the same commit twice."""
    session = record_seed(Keeper(store_dir), repo)
    commit = {"type": "operation", "operation_id": "op-deploy-1", "tool": "shell",
              "status": "committed", "result_persisted": True, "result": {"exit": 0}}
    first, again = session.record_many([commit, dict(commit)])
    assert (first.duplicate, again.duplicate, again.seq) == (False, True, first.seq)
    assert session.state["operations"].counts()["duplicates"] == 1
    lines = session.writer.path.read_bytes().count(b'"status":"committed"')
    session.close()
    assert lines == 1


def test_callers_cannot_forge_the_servers_own_records(store_dir, repo):
    """Fixture: a fresh session; a snapshot and a session_meta offered through record()."""
    from sessionkeeper.errors import InvalidEvent

    session = Keeper(store_dir).start(repo)
    for forged in ({"type": "snapshot", "through_seq": 1, "state": {}},
                   {"type": "session_meta", "thread_id": "x", "session_id": "y", "cwd": "/"}):
        with pytest.raises(InvalidEvent, match="written by Session Keeper itself"):
            session.record(forged)
    session.close()


def test_resuming_from_another_directory_of_the_same_repository_is_drift(store_dir, repo):
    """Fixture: a closed session recorded in repo/services/billing, resumed from the repo root."""
    sub = repo / "services" / "billing"
    sub.mkdir(parents=True)
    keeper = Keeper(store_dir)
    keeper.start(sub, title="billing").close()
    thread = keeper.rows()[0].thread_id
    report, session = keeper.resume(thread, workspace=str(repo))
    assert report.verdict == "drift" and session is None
    assert [(d.kind, d.recorded, d.current) for d in report.differences] == [
        ("relocated", str(sub), str(repo))]


def test_resume_keeps_the_models_overrides(store_dir, repo):
    """Fixture: a session whose model has overrides, closed and resumed twice."""
    keeper = Keeper(store_dir)
    session = keeper.start(repo, model="claude-opus")
    session.record({"type": "model", "name": "claude-opus",
                    "overrides": {"temperature": 0.2, "reasoning": "high"}})
    session.close()
    thread = session.thread_id
    for _ in range(2):
        report, session = keeper.resume(thread, workspace=str(repo))
        assert report.subsystems["model"].summary["overrides"] == {"temperature": 0.2, "reasoning": "high"}
        assert session.state["model"].summary()["overrides"] == {"temperature": 0.2,
                                                                 "reasoning": "high"}
        session.close()
