"""Rewind over real files in a real git repository: plan, execute, force, undo (`story`, `repo`)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

from sessionkeeper.recovery.rewind import execute, plan_rewind, plan_undo
from sessionkeeper.store.blobs import BlobStore

from ..conftest import git
from ..file_session import FileSession
from ..rewind_files import REFUND, USER, V1, V2
from ..rewind_files import sha as _sha


def _disk(root: Path) -> dict[str, bytes]:
    """Every file under `root` outside .git, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


@dataclass
class Story:
    """The session of the issue: two agent turns over three tracked files plus a created one."""

    repo: Path
    blobs: BlobStore
    session: FileSession
    baseline: dict[str, bytes]
    early: int  # the seq after the agent's first turn


@pytest.fixture
def story(repo: Path, store_dir: Path) -> Story:
    """`repo` plus ledger.py committed; turn 1 writes V1 of the three files, turn 2 V2 and refund.py."""
    (repo / "ledger.py").write_bytes(b"ENTRIES = None\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "ledger")
    baseline = _disk(repo)
    session = FileSession(repo, BlobStore(store_dir))
    session.event()  # the user's first prompt
    for name, data in V1.items():
        session.write(name, data)
    early = session.event()  # the agent's answer ends turn 1
    session.event()
    for name in ("payment.py", "ledger.py", "test_payment.py"):
        session.write(name, V2[name])
    session.write("refund.py", REFUND)
    return Story(repo, session.blobs, session, baseline, early)


def test_rewind_restores_untouched_files_and_refuses_the_one_the_user_edited(story: Story) -> None:
    """Fixture: `story`, then the user edits test_payment.py outside the session."""
    (story.repo / "test_payment.py").write_bytes(USER)
    plan = plan_rewind(story.session.history, to_seq=story.early, current=story.session.current())
    actions = {s.path: s.action for s in plan.steps}
    assert actions == {"payment.py": "restore", "ledger.py": "restore", "test_payment.py": "refused",
                       "refund.py": "delete"}
    refused = next(s for s in plan.steps if s.path == "test_payment.py")
    assert "changed on disk since the session's last version" in refused.reason
    result = execute(plan, workspace=story.repo, blobs=story.blobs)
    assert {o.path: o.status for o in result.outcomes} == {
        "payment.py": "written", "ledger.py": "written", "test_payment.py": "skipped",
        "refund.py": "deleted"}
    disk = _disk(story.repo)
    assert disk["payment.py"] == V1["payment.py"] and disk["ledger.py"] == V1["ledger.py"]
    assert disk["test_payment.py"] == USER and "refund.py" not in disk


def test_forced_rewind_keeps_the_user_s_content_as_a_blob_and_undo_brings_everything_back(
        story: Story) -> None:
    """Fixture: `story`, the user's edit of test_payment.py, a forced rewind, then its undo."""
    (story.repo / "test_payment.py").write_bytes(USER)
    before = _disk(story.repo)
    plan = plan_rewind(story.session.history, to_seq=story.early, current=story.session.current(),
                       force=True)
    forced = next(s for s in plan.steps if s.path == "test_payment.py")
    assert forced.action == "restore" and forced.forced and "forced" in forced.reason
    result = execute(plan, workspace=story.repo, blobs=story.blobs)
    assert _disk(story.repo) == {**{k: v for k, v in before.items() if k != "refund.py"}, **V1}
    assert result.undo["test_payment.py"] == _sha(USER)
    assert story.blobs.get(_sha(USER)) == USER  # the user's work is recoverable
    undo = plan_undo(result, current=story.session.current())
    assert {s.action for s in undo.steps} == {"restore"}
    undone = execute(undo, workspace=story.repo, blobs=story.blobs)
    assert {o.status for o in undone.outcomes} == {"written"}
    assert _disk(story.repo) == before  # refund.py is back too, byte for byte


def test_a_user_edit_recorded_after_the_target_seq_is_refused_too(story: Story) -> None:
    """Fixture: `story`, then a user edit of ledger.py recorded by the watcher (author user)."""
    seq = story.session.write("ledger.py", b"# the user's ledger\n", author="user")
    plan = plan_rewind(story.session.history, to_seq=story.early, current=story.session.current())
    step = next(s for s in plan.steps if s.path == "ledger.py")
    assert step.action == "refused" and f"changed by the user at seq {seq}" in step.reason
    assert next(s for s in plan.steps if s.path == "payment.py").action == "restore"


def test_rewind_to_before_the_first_edit_restores_the_baseline_commit(story: Story) -> None:
    """Fixture: `story`; a rewind to seq 1 (the prompt before any edit)."""
    plan = plan_rewind(story.session.history, to_seq=1, current=story.session.current())
    assert {s.target_label for s in plan.changes()} == {"before the session"}
    assert len(plan.changes()) == 4  # three restored from git, refund.py deleted
    execute(plan, workspace=story.repo, blobs=story.blobs)
    assert _disk(story.repo) == story.baseline
    assert git(story.repo, "status", "--porcelain") == ""


def test_rewind_of_one_path_leaves_the_others_alone(story: Story) -> None:
    """Fixture: `story`; a rewind of payment.py only."""
    plan = plan_rewind(story.session.history, to_seq=story.early, current=story.session.current(),
                       paths=["./payment.py"])
    assert [s.path for s in plan.steps] == ["payment.py"]
    execute(plan, workspace=story.repo, blobs=story.blobs)
    disk = _disk(story.repo)
    assert disk["payment.py"] == V1["payment.py"] and disk["ledger.py"] == V2["ledger.py"]


def test_a_file_already_at_its_target_is_unchanged_and_a_second_run_changes_nothing(story: Story) -> None:
    """Fixture: `story`; the same rewind executed twice."""
    history = story.session.history
    first = execute(plan_rewind(history, to_seq=story.early, current=story.session.current()),
                    workspace=story.repo, blobs=story.blobs)
    assert {o.status for o in first.outcomes} == {"written", "deleted"}
    again = plan_rewind(history, to_seq=story.early, current=story.session.current(), force=True)
    assert {s.action for s in again.steps} == {"unchanged"}


def test_a_file_the_agent_deleted_comes_back_and_one_it_created_goes(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; the agent deletes test_payment.py and creates docs/notes.md (new directory)."""
    session = FileSession(repo, BlobStore(store_dir))
    mark = session.event()
    session.delete("test_payment.py")
    session.write("docs/notes.md", b"# notes\n")
    plan = plan_rewind(session.history, to_seq=mark, current=session.current())
    assert {s.path: s.action for s in plan.steps} == {"test_payment.py": "restore", "docs/notes.md": "delete"}
    result = execute(plan, workspace=repo, blobs=session.blobs)
    assert (repo / "test_payment.py").read_text() == "from payment import charge\n"
    assert not (repo / "docs" / "notes.md").exists()
    undone = execute(plan_undo(result, current=session.current()), workspace=repo, blobs=session.blobs)
    assert {o.status for o in undone.outcomes} == {"written", "deleted"}
    assert not (repo / "test_payment.py").exists() and (repo / "docs/notes.md").read_bytes() == b"# notes\n"


def test_an_untracked_file_goes_back_to_its_content_when_first_seen(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo` with an untracked scratch.txt the agent then edits."""
    (repo / "scratch.txt").write_bytes(b"user's scratch\n")
    session = FileSession(repo, BlobStore(store_dir))
    session.write("scratch.txt", b"agent was here\n")
    execute(plan_rewind(session.history, to_seq=0, current=session.current()), workspace=repo,
            blobs=session.blobs)
    assert (repo / "scratch.txt").read_bytes() == b"user's scratch\n"


def test_binary_and_oversized_versions_are_reported_not_restored(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; the agent writes a binary logo.png and a 2 MB data.csv (1 MB limit), then
    replaces both."""
    session = FileSession(repo, BlobStore(store_dir), limit_bytes=1 << 20)
    session.write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0IHDR")
    session.write("data.csv", b"a,b\n" * (1 << 19))
    mark = session.event()
    session.write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0IHDR v2")
    session.write("data.csv", b"a,b\n")
    plan = plan_rewind(session.history, to_seq=mark, current=session.current())
    reasons = {s.path: (s.action, s.reason) for s in plan.steps}
    assert reasons["logo.png"][0] == "unavailable" and "(binary)" in reasons["logo.png"][1]
    assert reasons["data.csv"][0] == "unavailable" and "(too_large)" in reasons["data.csv"][1]
    result = execute(plan, workspace=repo, blobs=session.blobs)
    assert {o.status for o in result.outcomes} == {"skipped"}
    assert (repo / "data.csv").read_bytes() == b"a,b\n"


def test_a_missing_blob_found_when_planning_makes_that_file_unavailable(story: Story) -> None:
    """Fixture: `story`; the blob of payment.py's V1 deleted from the store, checked before planning."""
    key = _sha(V1["payment.py"])
    (story.blobs.root / key[:2] / key[2:]).unlink()
    bad = story.blobs.unreadable(v["hash"] for vs in story.session.history.values() for v in vs if v["hash"])
    plan = plan_rewind(story.session.history, to_seq=story.early, current=story.session.current(),
                       unreadable=bad)
    step = next(s for s in plan.steps if s.path == "payment.py")
    assert step.action == "unavailable" and "blob_missing" in step.reason
    assert next(s for s in plan.steps if s.path == "ledger.py").action == "restore"


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_a_blob_that_fails_at_execute_fails_that_file_only_and_never_writes_garbage(
        story: Story, damage: str) -> None:
    """Fixture: `story`; a plan made, then the blob of ledger.py's V1 deleted or damaged on disk."""
    plan = plan_rewind(story.session.history, to_seq=story.early, current=story.session.current())
    key = _sha(V1["ledger.py"])
    path = story.blobs.root / key[:2] / key[2:]
    if damage == "missing":
        path.unlink()
    else:
        raw = bytearray(path.read_bytes())
        raw[-3] ^= 0xFF
        path.write_bytes(bytes(raw))
    result = execute(plan, workspace=story.repo, blobs=story.blobs)
    failed = next(o for o in result.outcomes if o.path == "ledger.py")
    assert failed.status == "failed" and failed.error == f"blob_{damage}"
    assert key in failed.reason and "not touched" in failed.reason
    assert (story.repo / "ledger.py").read_bytes() == V2["ledger.py"]
    assert (story.repo / "payment.py").read_bytes() == V1["payment.py"]  # the rest proceeded
    assert not [n for n in os.listdir(story.repo) if n.endswith(".sk-rewind")]
    assert story.blobs.verify().ok is (damage == "missing")  # fsck would report the damage


def test_a_file_changed_after_the_plan_was_made_is_left_alone(story: Story) -> None:
    """Fixture: `story`; a plan, then payment.py edited before it runs."""
    plan = plan_rewind(story.session.history, to_seq=story.early, current=story.session.current())
    (story.repo / "payment.py").write_bytes(b"# typed while the dialog was open\n")
    result = execute(plan, workspace=story.repo, blobs=story.blobs)
    stale = next(o for o in result.outcomes if o.path == "payment.py")
    assert stale.status == "stale"
    assert (story.repo / "payment.py").read_bytes() == b"# typed while the dialog was open\n"


def test_undo_refuses_a_file_changed_since_the_rewind_unless_forced(story: Story) -> None:
    """Fixture: `story`; a rewind, then payment.py edited, then an undo with and without force."""
    result = execute(plan_rewind(story.session.history, to_seq=story.early,
                                 current=story.session.current()), workspace=story.repo, blobs=story.blobs)
    (story.repo / "payment.py").write_bytes(b"# after the rewind\n")
    undo = plan_undo(result, current=story.session.current())
    assert next(s for s in undo.steps if s.path == "payment.py").action == "refused"
    forced = plan_undo(result, current=story.session.current(), force=True)
    execute(forced, workspace=story.repo, blobs=story.blobs)
    assert (story.repo / "payment.py").read_bytes() == V2["payment.py"]


def test_restoring_keeps_the_file_s_mode(story: Story) -> None:
    """Fixture: `story` with payment.py made executable before the rewind."""
    os.chmod(story.repo / "payment.py", 0o755)
    execute(plan_rewind(story.session.history, to_seq=story.early, current=story.session.current()),
            workspace=story.repo, blobs=story.blobs)
    assert stat.S_IMODE((story.repo / "payment.py").stat().st_mode) == 0o755


def test_nothing_known_before_the_first_version_is_unavailable(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; a history from before content was kept (hash only, no before)."""
    history = {"payment.py": [{"seq": 5, "hash": _sha(b"x"), "author": "agent"}]}
    plan = plan_rewind(history, to_seq=2, current={"payment.py": _sha(b"x")})
    [step] = plan.steps
    assert step.action == "unavailable" and "before its first recorded change (seq 5)" in step.reason


def test_a_path_without_history_or_current_hash_is_never_touched() -> None:
    """Fixture: none; a plan over a path the session never saw and one whose disk hash is not given."""
    history = {"a.py": [{"seq": 1, "hash": _sha(b"a"), "author": "agent", "change": "create"}]}
    plan = plan_rewind(history, to_seq=0, current={}, paths=["a.py", "b.py"], force=True)
    assert [(s.path, s.action) for s in plan.steps] == [("a.py", "refused"), ("b.py", "unavailable")]


def test_a_path_resolving_outside_the_workspace_fails_without_writing(story: Story, tmp_path: Path) -> None:
    """Fixture: `story`, payment.py swapped for a symlink to a file outside the repository."""
    current = story.session.current()
    outside = tmp_path / "outside.py"
    outside.write_bytes(V2["payment.py"])
    (story.repo / "payment.py").unlink()
    (story.repo / "payment.py").symlink_to(outside)
    plan = plan_rewind(story.session.history, to_seq=story.early, current=current)
    result = execute(plan, workspace=story.repo, blobs=story.blobs)
    failed = next(o for o in result.outcomes if o.path == "payment.py")
    assert failed.status == "failed" and failed.error == "outside_workspace"
    assert outside.read_bytes() == V2["payment.py"]
