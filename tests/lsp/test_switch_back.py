"""Switch back (session/switchBack) in-process over real git repositories: it refuses, running
nothing, when it could lose work or git would refuse; otherwise it checks the branch out. A resume
of the current thread that continues nothing keeps the current session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sessionkeeper.lsp import gitops
from sessionkeeper.lsp.app import dispatch
from sessionkeeper.lsp.checkout import explained_by_move, git_moved_event
from sessionkeeper.lsp.options import ServerOptions
from sessionkeeper.lsp.server import DID_CHANGE, SessionKeeperServer
from sessionkeeper.lsp.watch import is_git_state

from ..conftest import git


@pytest.fixture
def server(store_dir: Path, repo: Path) -> Iterator[SessionKeeperServer]:
    """An in-process server on `store_dir` with `repo` (fix/payment) as its workspace."""
    ls = SessionKeeperServer(store=str(store_dir))
    ls.workspace_root = str(repo)
    ls.options = ServerOptions(watch=False)
    ls.sent = []
    ls.protocol.notify = lambda method, params=None: ls.sent.append((method, params))
    yield ls
    ls.close_all()


async def drifted_thread(server: SessionKeeperServer, repo: Path) -> dict[str, Any]:
    """A thread started on fix/payment, then `git checkout main` (its resume would drift)."""
    started = await dispatch(server, "session/start", {"title": "pay"})
    git(repo, "checkout", "-q", "main")
    return started


async def switch(server: SessionKeeperServer, thread: str, **kw: Any) -> dict[str, Any]:
    return await dispatch(server, "session/switchBack", {"thread_id": thread, **kw})


async def test_dry_run_says_what_would_run_and_runs_nothing(
        server: SessionKeeperServer, repo: Path) -> None:
    """Fixtures: `server`, `repo`."""
    started = await drifted_thread(server, repo)
    result = await switch(server, started["thread_id"])
    assert result["refused"] is None and result["ran"] is False
    assert result["branch"] == "fix/payment" and result["command"] == "git checkout fix/payment"
    assert git(repo, "branch", "--show-current") == "main"


async def test_switch_back_checks_the_recorded_branch_out(
        server: SessionKeeperServer, repo: Path) -> None:
    """Fixtures: `server`, `repo`."""
    started = await drifted_thread(server, repo)
    result = await switch(server, started["thread_id"], dry_run=False)
    assert result["ran"] is True and result["refused"] is None
    assert git(repo, "branch", "--show-current") == "fix/payment"
    check = await dispatch(server, "session/checkResume", {"thread_id": started["thread_id"]})
    assert check["verdict"] == "ok", check["differences"]


async def test_switch_back_refuses_uncommitted_changes_and_names_them(
        server: SessionKeeperServer, repo: Path) -> None:
    """Fixtures: `server`, `repo` (payment.py then edited and not committed)."""
    started = await drifted_thread(server, repo)
    (repo / "payment.py").write_text("work in progress\n")
    result = await switch(server, started["thread_id"], dry_run=False)
    assert result["refused"] == "uncommitted" and result["ran"] is False
    assert result["uncommitted"] == ["payment.py"] and "payment.py" in result["message"]
    assert git(repo, "branch", "--show-current") == "main"
    assert (repo / "payment.py").read_text() == "work in progress\n"


async def test_switch_back_refuses_a_branch_checked_out_in_another_worktree(
        server: SessionKeeperServer, repo: Path, tmp_path: Path) -> None:
    """Fixtures: `server`, `repo`; fix/payment then checked out in a linked worktree."""
    started = await drifted_thread(server, repo)
    other = tmp_path / "other-worktree"
    git(repo, "worktree", "add", "-q", str(other), "fix/payment")
    result = await switch(server, started["thread_id"], dry_run=False)
    assert result["refused"] == "other_worktree" and result["worktree"] == str(other.resolve())
    assert git(repo, "branch", "--show-current") == "main"


async def test_switch_back_reports_a_failing_checkout_and_recreates_a_deleted_branch(
        server: SessionKeeperServer, repo: Path) -> None:
    """Fixtures: `server`, `repo`; then an untracked file the branch would overwrite."""
    started = await drifted_thread(server, repo)
    git(repo, "checkout", "-q", "fix/payment")
    (repo / "extra.txt").write_text("tracked on fix/payment\n")
    git(repo, "add", "extra.txt")
    git(repo, "commit", "-qm", "extra")
    git(repo, "checkout", "-q", "main")
    (repo / "extra.txt").write_text("untracked here\n")
    result = await switch(server, started["thread_id"], dry_run=False)
    assert result["refused"] == "failed" and "extra.txt" in result["message"]
    assert (repo / "extra.txt").read_text() == "untracked here\n"

    (repo / "extra.txt").unlink()
    recorded_head = git(repo, "rev-parse", "fix/payment~1")  # where the thread was started
    git(repo, "branch", "-q", "-D", "fix/payment")
    result = await switch(server, started["thread_id"])  # a deleted branch is recreated there
    assert result["refused"] is None and result["command"] == f"git switch -c fix/payment {recorded_head}"
    assert "no longer exists" in result["message"]
    result = await switch(server, started["thread_id"], dry_run=False)
    assert result["ran"] is True and git(repo, "rev-parse", "HEAD") == recorded_head
    assert git(repo, "branch", "--show-current") == "fix/payment"


async def test_nothing_to_switch_when_the_branch_is_checked_out(
        server: SessionKeeperServer) -> None:
    """Fixture: `server` (thread started on the branch that is still checked out)."""
    started = await dispatch(server, "session/start", {})
    assert (await switch(server, started["thread_id"]))["refused"] == "nothing_to_switch"


@pytest.mark.parametrize("decision", ["cancel", "switch_back"])
async def test_a_resume_of_the_current_thread_that_continues_nothing_keeps_it_current(
        server: SessionKeeperServer, repo: Path, decision: str) -> None:
    """Fixtures: `server`, `repo`; the current thread drifted by a checkout of main."""
    started = await drifted_thread(server, repo)
    result = await dispatch(server, "session/resume", {"thread_id": started["thread_id"],
                                                       "decision": decision})
    assert result["session_id"] is None and result["report"]["verdict"] == "drift"
    assert result["report"]["decision"] == decision
    current = await dispatch(server, "session/current", {})
    assert current is not None and current["session_id"] == started["session_id"]
    assert [p for m, p in server.sent if m == DID_CHANGE][-1] is not None


def test_a_move_explains_only_files_that_now_equal_the_new_commit(repo: Path) -> None:
    """Fixture: `repo` (fix/payment); a commit there, then main checked out and one file edited."""
    old = gitops.head(str(repo))
    (repo / "payment.py").write_text("v2\n")
    (repo / "test_payment.py").write_text("t2\n")
    git(repo, "commit", "-qam", "v2")
    new = gitops.head(str(repo))
    (repo / "test_payment.py").write_text("edited on top\n")
    explained = explained_by_move(str(repo), old, new, ["payment.py", "test_payment.py", "x.md"])
    assert explained == {"payment.py"}
    event = git_moved_event(old, new, explained=explained, seen=lambda p: p == "payment.py")
    assert event == {"type": "git_moved", "files": 1, "touched": ["payment.py"],
                     "from_branch": "fix/payment", "to_branch": "fix/payment",
                     "from_head": old.commit, "to_head": new.commit}
    assert explained_by_move(str(repo), new, new, ["payment.py"]) == set()


def test_git_dirs_of_a_linked_worktree_and_git_state_paths(repo: Path, tmp_path: Path) -> None:
    """Fixtures: `repo`, and a linked worktree of it."""
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    dirs = gitops.git_dirs(str(linked))
    assert dirs is not None and dirs.top == str(linked.resolve())
    assert dirs.common_dir == str((repo / ".git").resolve())
    assert dirs.git_dir.startswith(dirs.common_dir + "/worktrees/")
    assert gitops.head(str(linked)).branch == "side"
    assert gitops.git_dirs(str(tmp_path)) is None and gitops.head(str(tmp_path)) is None
    assert [p for p in ("HEAD", "refs/heads/main", "packed-refs", "index.lock", "index",
                        "objects/ab/cd", "refs/heads/main.lock", "ORIG_HEAD")
            if is_git_state(p)] == ["HEAD", "refs/heads/main", "packed-refs", "index.lock"]




def test_head_names_the_branch_when_a_tag_has_its_name(repo: Path) -> None:
    """Fixture: `repo` on fix/payment, with a tag also named fix/payment."""
    git(repo, "tag", "fix/payment")
    assert gitops.head(str(repo)).branch == "fix/payment"
