"""The hook journal of an agent session: stored under the store, never listed, exact facts."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import InvalidId, InvalidWorkspace, SessionReadOnly, ThreadBusy
from tests.conftest import git

SID = "0b9c6e2e-1d2f-4c3a-9e8f-7a6b5c4d3e2f"


def test_a_journal_records_a_real_baseline_and_is_never_listed_as_a_thread(store_dir: Path,
                                                                          repo: Path) -> None:
    """Fixture: `repo` (fix/payment, one commit) and an empty store; a claude journal created."""
    keeper = Keeper(store_dir)
    with keeper.journal("claude", SID, workspace=repo) as journal:
        assert journal.thread_id == SID
        journal.record({"type": "baseline"})
    assert keeper.rows() == [] and keeper.fsck().clean and keeper.fsck().checked == 0
    [rollout] = keeper.journal_rollouts("claude", SID)
    assert rollout.path is not None and (store_dir / "journals" / "claude") in rollout.path.parents
    head = git(repo, "rev-parse", "HEAD")
    assert rollout.meta is not None and rollout.meta["agent"] == "claude"
    assert rollout.meta["baseline"]["head"] == head
    baselines = [r for r in rollout.records if r["type"] == "baseline"]
    assert [(b["branch"], b["head"]) for b in baselines] == [("fix/payment", head)]


def test_a_journal_is_reopened_and_appended_to(store_dir: Path, repo: Path) -> None:
    """Fixture: `repo`; a journal created, closed, then opened again without a workspace."""
    keeper = Keeper(store_dir)
    with keeper.journal("codex", SID.upper(), workspace=repo) as first:
        first.record({"type": "operation", "operation_id": "call_1", "tool": "exec_command",
                      "status": "started", "args": {"cmd": "ls"}})
        session = first.session_id
    with Keeper(store_dir).journal("codex", SID) as again:
        assert again.session_id == session
        again.record({"type": "operation", "operation_id": "call_1", "tool": "exec_command",
                      "status": "committed"})
    replayed = Keeper(store_dir).read_journal("codex", SID)
    assert replayed is not None
    assert replayed.state.summaries()["operations"]["committed"] == 1
    assert Keeper(store_dir).read_journal("codex", "1b9c6e2e-1d2f-4c3a-9e8f-7a6b5c4d3e2f") is None


def test_a_missing_journal_needs_a_workspace_and_bad_names_are_refused(store_dir: Path) -> None:
    """Fixture: an empty store."""
    keeper = Keeper(store_dir)
    with pytest.raises(InvalidWorkspace, match="name the session's workspace"):
        keeper.journal("claude", SID)
    with pytest.raises(InvalidId, match="unknown agent"):
        keeper.journal("../native", SID)
    with pytest.raises(InvalidId, match="expected a UUID"):
        keeper.journal("claude", "not-a-session")
    assert not (store_dir / "journals" / "claude" / "sessions").exists() or not any(
        (store_dir / "journals" / "claude" / "sessions").rglob("*.jsonl"))


def test_a_read_only_keeper_reads_journals_and_never_writes_one(store_dir: Path, repo: Path) -> None:
    """Fixture: `repo`; a journal written, then a read-only Keeper of the same store."""
    Keeper(store_dir).journal("claude", SID, workspace=repo).close()
    reader = Keeper(store_dir, read_only=True)
    assert len(reader.journal_rollouts("claude", SID)) == 1
    with pytest.raises(SessionReadOnly):
        reader.journal("claude", SID, workspace=repo)


def _create(store: str, workspace: str, barrier: object) -> str:
    barrier.wait()  # type: ignore[attr-defined]
    with Keeper(store).journal("claude", SID, workspace=workspace, wait_s=30) as journal:
        return journal.session_id


def test_hooks_racing_to_create_one_journal_make_one_thread_with_one_first_session(
        store_dir: Path, repo: Path) -> None:
    """Fixture: `repo`; four real processes create the same journal at the same moment."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Manager().Barrier(4)
    with ctx.Pool(4) as pool:
        sessions = pool.starmap(_create, [(str(store_dir), str(repo), barrier)] * 4)
    assert len(set(sessions)) == 1
    keeper = Keeper(store_dir)
    assert len(keeper.journal_rollouts("claude", SID)) == 1
    sub = keeper.journal_keeper("claude")
    assert sub.store.foreign_sessions(SID) == []


_HOLD = """
import sys, time
from sessionkeeper.api import Keeper
journal = Keeper(sys.argv[1]).journal("claude", sys.argv[2])
print("held", flush=True)
time.sleep(float(sys.argv[3]))
journal.close()
"""


def test_a_journal_held_by_another_process_is_waited_for_then_busy(store_dir: Path,
                                                                  repo: Path) -> None:
    """Fixture: `repo`; a real process holds the journal open for a while."""
    Keeper(store_dir).journal("claude", SID, workspace=repo).close()
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(store_dir), SID, "1.0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ThreadBusy):
            Keeper(store_dir).journal("claude", SID, wait_s=0.05)
        started = time.monotonic()
        with Keeper(store_dir).journal("claude", SID, wait_s=30) as journal:
            journal.record({"type": "baseline"})
        assert time.monotonic() - started < 30
    finally:
        holder.wait(timeout=30)
    assert holder.returncode == 0
