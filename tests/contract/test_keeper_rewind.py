"""Keeper.rewind's own rules over a real repository (`repo`) and store: what it never touches, the
undo guard, dry runs, and a thread another process writes to."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import ThreadBusy

from ..conftest import git


def record(keeper: Keeper, repo: Path, files: dict[str, bytes]) -> tuple[str, list[int]]:
    """Start a thread, write and record each file (without hashes); (thread, seqs)."""
    with keeper.start(repo) as session:
        seqs = []
        for name, data in files.items():
            (repo / name).write_bytes(data)
            seqs.append(session.record({"type": "file_change", "path": name}).seq)
        return session.thread_id, seqs


def test_a_symlink_out_of_the_workspace_is_never_read_nor_rewound(
        store_dir: Path, repo: Path, tmp_path: Path) -> None:
    """Fixtures: `store_dir`, `repo` with link.txt pointing at a file outside it."""
    outside = tmp_path / "outside.txt"
    outside.write_text("not the session's\n")
    (repo / "link.txt").symlink_to(outside)
    keeper = Keeper(store_dir)
    with keeper.start(repo) as session:
        session.record({"type": "file_change", "path": "link.txt"})
        thread = session.thread_id
    [step] = keeper.rewind(thread, to_seq=0, force=True).plan.steps
    assert (step.action, step.reason) == ("unavailable", "it resolves outside the workspace")
    assert outside.read_text() == "not the session's\n"
    report = keeper.check_resume(thread, workspace=str(repo))
    assert not [d for d in report.differences if d.kind.startswith("file_")]


def test_a_secret_file_the_agent_created_is_never_deleted_by_a_rewind(
        store_dir: Path, repo: Path) -> None:
    """Fixtures: `store_dir`, `repo`; the agent creates .env (kept by hash only)."""
    keeper = Keeper(store_dir)
    thread, _ = record(keeper, repo, {".env": b"TOKEN=abc\n"})
    report = keeper.rewind(thread, to_seq=0, force=True)
    [step] = report.plan.steps
    assert step.action == "unavailable" and "secrets file" in step.reason
    assert (repo / ".env").read_bytes() == b"TOKEN=abc\n" and not report.complete


def test_undo_refuses_a_file_changed_after_the_rewind_unless_forced(
        store_dir: Path, repo: Path) -> None:
    """Fixtures: `store_dir`, `repo`; payment.py v1 then v2, a rewind to v1, then the agent
    writes v3 and records it."""
    keeper = Keeper(store_dir)
    thread, seqs = record(keeper, repo, {"payment.py": b"v1\n"})
    with keeper.attach(keeper.store.thread_sessions(thread)[-1].session_id) as session:
        (repo / "payment.py").write_bytes(b"v2\n")
        session.record({"type": "file_change", "path": "payment.py"})
    keeper.rewind(thread, to_seq=seqs[0])
    assert (repo / "payment.py").read_bytes() == b"v1\n"
    with keeper.attach(keeper.store.thread_sessions(thread)[-1].session_id) as session:
        (repo / "payment.py").write_bytes(b"v3\n")
        session.record({"type": "file_change", "path": "payment.py"})
    [refused] = keeper.rewind(thread, undo=True).plan.steps
    assert refused.action == "refused" and "after the rewind" in refused.reason
    assert (repo / "payment.py").read_bytes() == b"v3\n"
    forced = keeper.rewind(thread, undo=True, force=True)
    assert forced.result is not None and forced.result.outcomes[0].status == "written"
    assert (repo / "payment.py").read_bytes() == b"v2\n"


def test_a_dry_run_writes_no_record_and_touches_no_file(store_dir: Path, repo: Path) -> None:
    """Fixtures: `store_dir`, `repo`; payment.py rewritten by the agent."""
    keeper = Keeper(store_dir)
    thread, _ = record(keeper, repo, {"payment.py": b"agent\n"})
    rollout = Path(keeper.store.thread_sessions(thread)[-1].path)
    rollout = rollout if rollout.is_absolute() else keeper.store.layout.root / rollout
    size = rollout.stat().st_size
    report = keeper.rewind(thread, to_seq=0, dry_run=True)
    assert report.result is None and report.rewind_seq is None
    assert report.plan.steps[0].action == "restore"
    assert (repo / "payment.py").read_bytes() == b"agent\n" and rollout.stat().st_size == size


HOLDER = """
import sys
from sessionkeeper.api import Keeper
keeper = Keeper(sys.argv[1])
session = keeper.attach(sys.argv[2])
print("held", flush=True)
sys.stdin.read()
session.close()
"""


def test_a_thread_open_in_another_process_cannot_be_rewound_but_can_be_planned(
        store_dir: Path, repo: Path) -> None:
    """Fixtures: `store_dir`, `repo`; a second process holding the thread's session open."""
    keeper = Keeper(store_dir)
    thread, _ = record(keeper, repo, {"payment.py": b"agent\n"})
    session_id = keeper.store.thread_sessions(thread)[-1].session_id
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(store_dir), session_id],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        with pytest.raises(ThreadBusy):
            keeper.rewind(thread, to_seq=0)
        assert keeper.rewind(thread, to_seq=0, dry_run=True).plan.steps[0].action == "restore"
        assert (repo / "payment.py").read_bytes() == b"agent\n"
    finally:
        holder.communicate(b"", timeout=30)


def test_rewinding_a_symlink_the_agent_created_removes_the_link_not_the_file_it_names(
        store_dir: Path, repo: Path) -> None:
    """Fixtures: `store_dir`, `repo` with AGENTS.md committed; the agent links CLAUDE.md to it."""
    (repo / "AGENTS.md").write_text("the rules\n")
    git(repo, "add", "AGENTS.md")
    git(repo, "commit", "-q", "-m", "rules")
    keeper = Keeper(store_dir)
    with keeper.start(repo) as session:
        (repo / "CLAUDE.md").symlink_to("AGENTS.md")
        seq = session.record({"type": "file_change", "path": "CLAUDE.md"}).seq
        thread = session.thread_id
    report = keeper.rewind(thread, to_seq=seq - 1)
    outcome = report.outcome("CLAUDE.md")
    assert report.complete and outcome is not None and outcome.status == "deleted"
    assert not os.path.lexists(repo / "CLAUDE.md")
    assert (repo / "AGENTS.md").read_text() == "the rules\n"


def test_undo_of_a_forced_rewind_through_a_symlink_brings_back_the_users_content(
        store_dir: Path, repo: Path) -> None:
    """Fixtures: `store_dir`, `repo` with CLAUDE.md -> AGENTS.md committed; the agent writes two
    versions through CLAUDE.md, the user then edits AGENTS.md; a forced rewind, then its undo."""
    (repo / "AGENTS.md").write_text("rules\n")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    git(repo, "add", "AGENTS.md", "CLAUDE.md")
    git(repo, "commit", "-q", "-m", "rules")
    keeper = Keeper(store_dir)
    thread, seqs = record(keeper, repo, {"CLAUDE.md": b"agent v1\n"})
    with keeper.attach(keeper.store.thread_sessions(thread)[-1].session_id) as session:
        (repo / "CLAUDE.md").write_bytes(b"agent v2\n")
        session.record({"type": "file_change", "path": "CLAUDE.md"})
    (repo / "AGENTS.md").write_text("the user's rules\n")
    assert keeper.rewind(thread, to_seq=seqs[0], force=True).complete
    assert (repo / "AGENTS.md").read_text() == "agent v1\n"
    assert keeper.rewind(thread, undo=True).complete
    assert (repo / "AGENTS.md").read_text() == "the user's rules\n"
