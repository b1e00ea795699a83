"""Tool hooks spool, the journal folds (`journal_fold`): folding after every call, once at the end,
or only in memory for a read-only check gives the same journal state and the same resume report;
folding again (or after a fold killed midway) never counts a call twice; a damaged spooled call is
reported. Real hook processes (the console script) and real git repositories throughout."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.store import spool
from tests.conftest import git
from tests.unit._hooks import SID, call, payload, run

AGENT = "claude"
_VOLATILE = {"seq", "started_seq", "result_seq", "ts", "session_id", "thread_id", "at", "data",
             "restored_to_seq", "resumed_from", "created", "path", "rollout"}


def _plain(value: Any) -> Any:
    """A report or state without what differs between two stores of the same story (ids, seqs,
    times, paths of rollouts, the spool's own marks)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k not in _VOLATILE and k != "spooled"}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _journal_root(store: Path) -> str:
    return str(store / "journals" / AGENT)


def _story(repo: Path, stores: dict[str, Path]) -> None:
    """One session told to every store at the same moments: `eager` in-process (each call folded
    at once), the others through the real thin hook (spooled only)."""
    def both(event: str, **fields: Any) -> None:
        for name, store in stores.items():
            if name == "eager":
                call(AGENT, event, repo, store, **fields)
            else:
                done = run(AGENT, event, json.dumps(payload(AGENT, event, repo, **fields)), store)
                assert done.returncode == 0 and done.stderr == "", done.stderr

    both("SessionStart", source="startup")
    (repo / "notes.txt").write_text("user's notes\n")  # changed before the agent touches it
    edit = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / "notes.txt")},
            "tool_use_id": "toolu_edit", "tool_response": {"ok": True}}
    both("PreToolUse", **edit)
    (repo / "notes.txt").write_text("agent's notes\n")
    both("PostToolUse", **edit)
    shell = {"tool_name": "Bash", "tool_input": {"command": "rm test_payment.py; touch new.txt"},
             "tool_use_id": "toolu_bash", "tool_response": {"stdout": ""}}
    both("PreToolUse", **shell)
    (repo / "test_payment.py").unlink()
    (repo / "new.txt").write_text("new\n")
    both("PostToolUse", **shell)
    todo = {"tool_name": "TodoWrite", "tool_use_id": "toolu_todo", "tool_response": {},
            "tool_input": {"todos": [{"content": "fix rounding", "status": "completed"},
                                     {"content": "run tests", "status": "pending"}]}}
    both("PreToolUse", **todo)
    both("PostToolUse", **todo)
    branch = {"tool_name": "Bash", "tool_input": {"command": "git checkout -b hotfix"},
              "tool_use_id": "toolu_branch", "tool_response": {"stdout": ""}}
    both("PreToolUse", **branch)
    git(repo, "checkout", "-q", "-b", "hotfix")
    both("PostToolUse", **branch)
    cut = {"tool_name": "Write", "tool_input": {"file_path": str(repo / "payment.py")},
           "tool_use_id": "toolu_cut", "tool_response": {}}
    both("PreToolUse", **cut)  # its PostToolUse never comes: the call is in doubt


@pytest.fixture
def told(repo: Path, tmp_path: Path) -> dict[str, Path]:
    """Fixture: `repo`; the story of `_story` told to three stores (eager, spooled, spooled)."""
    stores = {name: tmp_path / f"store-{name}" for name in ("eager", "once", "read_only")}
    _story(repo, stores)
    git(repo, "checkout", "-q", "fix/payment")  # then the user goes back: the resume drifts
    (repo / "notes.txt").write_text("edited by the user\n")
    return stores


def _files(store: Path) -> dict[str, bytes]:
    """Every file of the store but the index (SQLite's own files) and their bytes."""
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*"))
            if p.is_file() and "state.db" not in p.name}


def _check(store: Path, repo: Path, *, read_only: bool) -> Any:
    keeper = Keeper(store, read_only=read_only).journal_keeper(AGENT)
    return keeper.check_resume(SID, workspace=str(repo))


def test_folding_after_every_call_once_at_the_end_or_in_memory_gives_the_same_report(
        told: dict[str, Path], repo: Path) -> None:
    """Fixture: `told` (three stores, one story)."""
    assert spool.pending(_journal_root(told["once"]), SID)
    before = _files(told["read_only"])
    in_memory = _check(told["read_only"], repo, read_only=True)
    assert _files(told["read_only"]) == before  # a read-only check folds in memory, writes nothing
    Keeper(told["once"]).journal(AGENT, SID).close()  # the fold, as a SessionStart makes it
    assert not spool.pending(_journal_root(told["once"]), SID)
    once, eager = _check(told["once"], repo, read_only=True), _check(told["eager"], repo,
                                                                    read_only=True)
    assert eager.verdict == "drift"
    assert [d.kind for d in eager.differences] == ["branch", "file_changed"]
    assert [op["operation_id"] for op in eager.in_doubt_operations] == ["toolu_cut"]
    assert _plain(once) == _plain(eager)
    assert _plain(in_memory) == _plain(eager)


def test_the_folded_journal_holds_what_the_calls_did(told: dict[str, Path], repo: Path) -> None:
    """Fixture: `told`; the spooled store folded, its state read back."""
    keeper = Keeper(told["once"])
    keeper.journal(AGENT, SID).close()
    state = keeper.read_journal(AGENT, SID)
    assert state is not None
    history = state.state["file_history"]
    assert history.seen["notes.txt"]["hash"] is not None  # the user's content, before the edit
    assert [v["author"] for v in history.files["notes.txt"]] == ["agent"]
    assert history.files["test_payment.py"][-1]["hash"] is None  # deleted by the shell call
    assert history.files["new.txt"][-1]["change"] == "create"
    ledger = state.state["operations"].ledger
    assert {op: e["status"] for op, e in ledger.items()} == {
        "toolu_edit": "committed", "toolu_bash": "committed", "toolu_todo": "committed",
        "toolu_branch": "committed", "toolu_cut": "started"}
    assert [t["status"] for t in state.state["todos"].items] == ["done", "pending"]
    assert state.state["worktree"].recorded().branch == "hotfix"
    blobs = keeper.journal_keeper(AGENT).store.blobs
    before = history.seen["notes.txt"]["hash"]
    assert blobs.get(before) == b"user's notes\n"


def test_folding_twice_or_after_a_fold_killed_midway_never_counts_a_call_twice(
        told: dict[str, Path], repo: Path) -> None:
    """Fixture: `told`; the spool copied aside, folded, the copy put back as a spool a fold took
    and never finished (what a fold killed after writing leaves), folded again."""
    root = _journal_root(told["once"])
    taken = spool.take(root, SID)
    assert len(taken) == 1
    kept = Path(taken[0]).read_bytes()
    keeper = Keeper(told["once"])
    keeper.journal(AGENT, SID).close()
    first = keeper.journal_rollouts(AGENT, SID)
    Path(taken[0]).write_bytes(kept)  # as if the fold had died before removing it
    keeper.journal(AGENT, SID).close()
    keeper.journal(AGENT, SID).close()
    again = keeper.journal_rollouts(AGENT, SID)
    assert [r for ro in again for r in ro.records if r["type"] != "snapshot"] == \
           [r for ro in first for r in ro.records if r["type"] != "snapshot"]
    assert not spool.pending(root, SID)


def test_a_damaged_spooled_call_is_reported_and_the_calls_after_it_are_folded(
        repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`, `store_dir`; a start and three tool calls through the thin hook, a byte of
    the second call's line flipped on disk."""
    done = run(AGENT, "SessionStart", json.dumps(payload(AGENT, "SessionStart", repo,
                                                         source="startup")), store_dir)
    assert done.returncode == 0
    for n in range(3):
        fields = {"tool_name": "Bash", "tool_input": {"command": f"echo {n}"},
                  "tool_use_id": f"toolu_{n}"}
        run(AGENT, "PreToolUse", json.dumps(payload(AGENT, "PreToolUse", repo, **fields)),
            store_dir)
    path = Path(spool.spool_path(_journal_root(store_dir), SID))
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"echo 1", b"echo 7")
    path.write_bytes(b"\n".join(lines))
    report = _check(store_dir, repo, read_only=True)
    assert report.verdict == "blocked"
    assert [d["kind"] for d in report.damaged] == ["checksum"]
    assert "spooled tool call" in report.damaged[0]["reason"]
    Keeper(store_dir).journal(AGENT, SID).close()
    ledger = Keeper(store_dir).read_journal(AGENT, SID).state["operations"].ledger  # type: ignore[union-attr]
    assert sorted(ledger) == ["toolu_0", "toolu_2"]
    assert _check(store_dir, repo, read_only=True).verdict == "blocked"  # never skipped silently


def test_a_call_whose_kept_content_was_removed_is_folded_by_its_hash(repo: Path,
                                                                     store_dir: Path) -> None:
    """Fixture: `repo`, `store_dir`; a start, an Edit's two hooks through the thin hook, then every
    blob of the journal store removed by hand before the fold."""
    run(AGENT, "SessionStart", json.dumps(payload(AGENT, "SessionStart", repo, source="startup")),
        store_dir)
    edit = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / "payment.py")},
            "tool_use_id": "toolu_gone", "tool_response": {}}
    run(AGENT, "PreToolUse", json.dumps(payload(AGENT, "PreToolUse", repo, **edit)), store_dir)
    (repo / "payment.py").write_text("def charge(amount):\n    return amount * 2\n")
    run(AGENT, "PostToolUse", json.dumps(payload(AGENT, "PostToolUse", repo, **edit)), store_dir)
    for blob in (store_dir / "journals" / AGENT / "blobs").rglob("*"):
        if blob.is_file() and blob.name != ".lock":
            blob.unlink()
    keeper = Keeper(store_dir)
    keeper.journal(AGENT, SID).close()
    state = keeper.read_journal(AGENT, SID)
    assert state is not None and state.state["operations"].ledger["toolu_gone"]["status"] == "committed"
    last = state.state["file_history"].files["payment.py"][-1]
    assert last["hash"] is not None and last.get("content") == "not_captured"
