"""An agent session from its log and our hook journal: the journal's exact facts win, said so."""

from __future__ import annotations

from pathlib import Path

from sessionkeeper import agents
from sessionkeeper.api import Keeper
from sessionkeeper.recovery.baseline import current_workspace
from sessionkeeper.recovery.comparison import verdict_of
from sessionkeeper.recovery.sources import journal_records, merge, replay_with_journal
from sessionkeeper.store.reader import Rollout
from tests.conftest import git
from tests.unit._agents import claude_home, generator, ledger, only_session, worktree

GEN = generator()
SID = GEN.CLAUDE_SESSION


def _log(home: Path) -> Rollout:
    return agents.get("claude").load(only_session("claude", home))


def _check(log: Rollout, journal: list[Rollout], repo: Path) -> tuple[list[tuple[str, object]], str]:
    thread = replay_with_journal(log, journal, agent="claude")
    differences, _ = thread.state.validate(current_workspace(str(repo)))
    return [(d.kind, d.current) for d in differences], verdict_of(differences)


def test_without_a_journal_every_fact_is_the_logs_and_reconstructed(repo: Path, tmp_path: Path) -> None:
    """Fixture: `repo` and the generator's Claude session run in it."""
    thread = replay_with_journal(_log(claude_home(repo, tmp_path / "claude")), [], agent="claude")
    assert thread.facts and all(f["origin"] == "log" and f["exact"] is False
                                for f in thread.facts.values())
    assert "journal" not in thread.meta["data"]


def test_the_journals_baseline_gives_the_exact_head_a_claude_log_lacks(repo: Path,
                                                                     tmp_path: Path) -> None:
    """Fixture: `repo`; the Claude session, a journal with a baseline, then a commit on the branch."""
    log = _log(claude_home(repo, tmp_path / "claude"))
    keeper = Keeper(tmp_path / "store")
    head = git(repo, "rev-parse", "HEAD")
    keeper.journal("claude", SID, workspace=repo).close()
    journal = keeper.journal_rollouts("claude", SID)
    assert _check(log, journal, repo) == ([], "ok")
    (repo / "payment.py").write_text("def charge(amount):\n    return round(amount, 2)\n")
    git(repo, "commit", "-qam", "moved on")
    assert _check(log, [], repo) == ([], "ok")  # the log alone cannot see a new commit
    assert _check(log, journal, repo) == ([("head", git(repo, "rev-parse", "HEAD"))], "drift")
    thread = replay_with_journal(log, journal, agent="claude")
    assert worktree(thread).recorded().head == head
    git_fact = thread.facts["git"]
    assert (git_fact["origin"], git_fact["exact"]) == ("journal", True)
    assert thread.meta["data"]["journal"]["sessions"] == 1


def test_a_log_branch_newer_than_the_journals_baseline_wins_without_a_head(
        repo: Path, tmp_path: Path) -> None:
    """Fixture: `repo`; a journal baseline first, then the log says the session moved to release/1.2."""
    keeper = Keeper(tmp_path / "store")
    keeper.journal("claude", SID, workspace=repo).close()
    journal = keeper.journal_rollouts("claude", SID)
    journal[0].meta["ts"] = "2026-11-28T09:00:00.000Z"  # before the whole transcript
    log = _log(claude_home(repo, tmp_path / "claude", branch="release/1.2"))
    assert _check(log, journal, repo) == ([("branch", "fix/payment")], "drift")
    thread = replay_with_journal(log, journal, agent="claude")
    assert thread.facts["git"]["origin"] == "log"


def _ops(*records: tuple[str, str, str]) -> list[dict[str, object]]:
    return [{"type": "operation", "operation_id": op, "tool": "Bash", "status": status, "ts": ts,
             "seq": n + 1} for n, (op, status, ts) in enumerate(records)]


def test_an_operation_the_hook_saw_commit_is_not_in_doubt_though_the_log_ends_inside_it() -> None:
    """Fixture: the generator's Claude session cut inside `toolu_deploy`; journal: started, committed."""
    log = agents.get("claude").load(only_session("claude", GEN.HERE / "claude" /
                                                 "tool_call_without_result"))
    assert [o["operation_id"] for o in ledger(replay_with_journal(log, [], agent="claude"))
            .in_doubt()] == ["toolu_deploy"]
    journal = Rollout(path=None, status=log.status, meta={"type": "session_meta", "seq": 0,
                                                          "ts": "2026-11-28T09:00:00.000Z"},
                      records=_ops(("toolu_deploy", "started", "2026-11-28T09:30:20.500Z"),
                                   ("toolu_deploy", "committed", "2026-11-28T09:30:40.000Z")))
    thread = replay_with_journal(log, [journal], agent="claude")
    entry = ledger(thread).lookup("toolu_deploy")
    assert entry is not None and entry["status"] == "committed" and ledger(thread).in_doubt() == []
    assert ledger(thread).summary()["duplicate_deliveries"] == []
    ops = thread.facts["operations"]
    assert ops["origin"] == "journal+log" and ops["exact"] is False and ops["from_journal"] == 1


def test_the_hooks_outcome_wins_over_the_logs_and_each_delivery_folds_once() -> None:
    """Fixture: hand-made records; the log says committed, the hook saw the call fail."""
    log = _ops(("call_1", "started", "T1"), ("call_1", "committed", "T4"))
    journal = _ops(("call_1", "started", "T2"), ("call_1", "failed", "T3"))
    merged = merge(log, journal)
    assert [(r["status"], o) for r, o in zip(merged.records, merged.origins, strict=True)] == [
        ("started", "log"), ("failed", "journal")]
    assert [r["seq"] for r in merged.records] == [1, 2]


def test_merged_records_keep_each_sources_order_and_compaction_points_follow_the_renumbering() -> None:
    """Fixture: a log with a compaction through seq 2, a journal record between its records."""
    log = [{"type": "message", "seq": 1, "ts": "T1"}, {"type": "message", "seq": 2, "ts": "T3"},
           {"type": "compacted", "seq": 3, "ts": "T5", "through_seq": 2, "summary": "s"}]
    journal = journal_records([{"ts": "T2", "baseline": {"branch": "main", "head": "a" * 40}}],
                              [{"type": "lifecycle", "seq": 5, "ts": "T4", "source": "rewind"},
                               {"type": "file_change", "seq": 6, "ts": "T4", "path": "a.py",
                                "rewind_seq": 2, "author": "rewind"}])
    merged = merge(log, journal)
    assert [(r["type"], r["seq"]) for r in merged.records] == [
        ("message", 1), ("baseline", 2), ("message", 3), ("file_change", 4), ("compacted", 5)]
    assert merged.records[-1]["through_seq"] == 3
    assert "rewind_seq" not in merged.records[3]
