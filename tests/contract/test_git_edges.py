"""Git edge cases a user meets: dubious ownership, bare repositories, worktrees, renamed branches."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import GitRefused

from ..conftest import git, init_repo


def test_a_repository_owned_by_another_user_is_refused_with_gits_reason(store_dir, tmp_path,
                                                                       monkeypatch):
    """Fixture: a real repository chowned to uid 65534 (a container or CI checkout); no global
    git configuration (a machine-wide safe.directory would hide the case)."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo = init_repo(tmp_path / "theirs", {"a.py": "x = 1\n"})
    keeper = Keeper(store_dir)
    thread = keeper.start(repo, title="mine for now")
    thread.close()
    for dirpath, dirs, files in os.walk(repo):
        for name in [*dirs, *files, ""]:
            os.lchown(os.path.join(dirpath, name), 65534, 65534)
    with pytest.raises(GitRefused, match="dubious ownership.*safe.directory"):
        keeper.start(repo)
    report = keeper.check_resume(thread.thread_id, workspace=str(repo))
    assert report.verdict == "blocked"
    assert [d.kind for d in report.differences] == ["git_refused"]
    assert "safe.directory" in report.differences[0].detail
    assert "outside any git repository" not in report.differences[0].detail


def test_a_bare_repository_or_a_git_dir_is_not_a_workspace(store_dir, tmp_path, repo):
    """Fixture: `repo` and a bare clone of it."""
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    for place in (bare, repo / ".git"):
        with pytest.raises(GitRefused, match="not a workspace"):
            Keeper(store_dir).start(place)


def test_outside_git_the_report_says_git_checks_were_skipped(store_dir, tmp_path):
    """Fixture: a plain directory (no repository)."""
    plain = tmp_path / "plain"
    plain.mkdir()
    keeper = Keeper(store_dir)
    thread = keeper.start(plain)
    thread.close()
    report = keeper.check_resume(thread.thread_id, workspace=str(plain))
    assert report.verdict == "ok" and report.notes and report.notes[0].startswith("outside git")


def test_switch_back_advice_opens_the_worktree_that_holds_the_branch(store_dir, repo, tmp_path):
    """Fixture: `repo` on fix/payment; the user goes to main, and fix/payment lives in a worktree."""
    keeper = Keeper(store_dir)
    thread = keeper.start(repo)
    thread.close()
    git(repo, "checkout", "-q", "main")
    other = tmp_path / "payment-worktree"
    git(repo, "worktree", "add", "-q", str(other), "fix/payment")
    report = keeper.check_resume(thread.thread_id, workspace=str(repo))
    assert report.verdict == "drift" and report.switch_back is None
    assert report.switch_back_worktree == str(other)
    assert any("open that worktree" in n for n in report.notes)


def test_switch_back_advice_for_a_renamed_branch_recreates_it_at_the_recorded_head(store_dir, repo):
    """Fixture: `repo` on fix/payment, then the branch renamed and main checked out."""
    keeper = Keeper(store_dir)
    thread = keeper.start(repo)
    thread.close()
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "branch", "-m", "fix/payment", "fix/payments")
    git(repo, "checkout", "-q", "main")
    report = keeper.check_resume(thread.thread_id, workspace=str(repo))
    assert report.switch_back == f"git switch -c fix/payment {head}"
    assert any("no longer exists" in n for n in report.notes)


def test_switch_back_advice_from_a_detached_recording_checks_out_its_commit(store_dir, repo):
    """Fixture: `repo` recorded on a detached HEAD, then back on a branch."""
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "--detach")
    keeper = Keeper(store_dir)
    thread = keeper.start(repo)
    thread.close()
    git(repo, "checkout", "-q", "fix/payment")
    report = keeper.check_resume(thread.thread_id, workspace=str(repo))
    assert report.verdict == "drift"
    assert report.switch_back == f"git checkout --detach {head}"


def test_the_plain_switch_back_is_a_checkout(store_dir, repo: Path):
    """Fixture: `repo` on fix/payment; main checked out."""
    keeper = Keeper(store_dir)
    thread = keeper.start(repo)
    thread.close()
    git(repo, "checkout", "-q", "main")
    assert keeper.check_resume(thread.thread_id, workspace=str(repo)).switch_back == (
        "git checkout fix/payment")


def test_a_shallow_clone_of_the_same_repository_is_drift_not_another_repository(store_dir, repo,
                                                                                  tmp_path):
    """Fixture: `repo` with origin set and three commits, a session recorded there; the repository
    moves on one commit and a CI-style shallow clone (depth 1) of it is checked: its history is
    cut, so the boundary commit is no root commit and the repository is known by its origin."""
    origin = "https://example.com/team/payment.git"
    git(repo, "remote", "add", "origin", origin)
    for n in (2, 3):
        (repo / "payment.py").write_text(f"def charge(amount):\n    return amount * {n}\n")
        git(repo, "commit", "-qam", f"change {n}")
    keeper = Keeper(store_dir)
    thread = keeper.start(repo)
    thread.close()
    (repo / "payment.py").write_text("def charge(amount):\n    return round(amount, 2)\n")
    git(repo, "commit", "-qam", "round")
    ci = tmp_path / "ci-checkout"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "fix/payment", f"file://{repo}",
        str(ci))
    git(ci, "remote", "set-url", "origin", origin)
    report = keeper.check_resume(thread.thread_id, workspace=str(ci))
    assert report.verdict == "drift"
    assert [d.kind for d in report.differences] == ["relocated", "head"]
    other = init_repo(tmp_path / "other", {"a.py": "x = 1\n"})  # a shallow clone of another one
    shallow_other = tmp_path / "shallow-other"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{other}", str(shallow_other))
    git(shallow_other, "remote", "set-url", "origin", "https://example.com/team/other.git")
    assert keeper.check_resume(thread.thread_id, workspace=str(shallow_other)).verdict == "blocked"


def test_a_tag_named_like_the_branch_is_no_branch_drift(store_dir, repo):
    """Fixture: `repo` on fix/payment; a tag `fix/payment` made after the session started (git
    then abbreviates the branch as `heads/fix/payment`), and a second session started with it."""
    keeper = Keeper(store_dir)
    before = keeper.start(repo)
    before.close()
    git(repo, "tag", "fix/payment")
    report = keeper.check_resume(before.thread_id, workspace=str(repo))
    assert (report.verdict, report.differences) == ("ok", [])
    from sessionkeeper.keeper.journal_fold import _head_moved
    from sessionkeeper.recovery import gitrun, queries

    with keeper.start(repo) as after:
        assert after.state["worktree"].recorded().branch == "fix/payment"
        call = {"cwd": str(repo), "git": {"head": gitrun.run(str(repo), *queries.HEAD).text()}}
        assert not _head_moved(call, after.state, after.workspace)  # an agent's shell tool:
        # no baseline refresh


def test_checked_from_another_directory_of_the_repository_files_are_compared_where_they_are(
        store_dir, repo):
    """Fixture: `repo`; a session started in its subdirectory server/ wrote server/config.py
    (recorded as config.py, relative to its cwd) and ran the tests; checked from the repository
    root: the file is found at its place (no false file_missing, tests not stale), and an edit
    made to it afterwards is reported."""
    (repo / "server").mkdir()
    (repo / "server" / "config.py").write_text("x = 1\n")
    keeper = Keeper(store_dir)
    with keeper.start(repo / "server") as session:
        (repo / "server" / "config.py").write_text("x = 2\n")
        session.record({"type": "file_change", "path": "config.py"})
        session.record({"type": "verifier", "kind": "tests", "passed": 3, "total": 3})
    report = keeper.check_resume(session.thread_id, workspace=str(repo))
    assert [d.kind for d in report.differences] == ["relocated"]
    assert report.invalidated == [] and report.rerun_verifier is False
    (repo / "server" / "config.py").write_text("x = 3\n")
    report = keeper.check_resume(session.thread_id, workspace=str(repo))
    assert [(d.kind, (d.recorded or {}).get("path") if d.kind != "relocated" else None)
            for d in report.differences] == [("relocated", None), ("file_changed", "config.py")]
    assert report.rerun_verifier is True


def test_a_workspace_named_like_sk_words_is_recorded_as_it_is(store_dir, tmp_path):
    """Fixture: a repository in a directory named `sk-learn-experiments-2024-refactor` (not a
    key: words): its cwd is recorded unredacted, so the thread resumes ok there and is listed."""
    workspace = init_repo(tmp_path / "sk-learn-experiments-2024-refactor", {"a.py": "x = 1\n"})
    keeper = Keeper(store_dir)
    with keeper.start(workspace) as session:
        assert session.writer.meta["cwd"] == str(workspace)
    report = keeper.check_resume(session.thread_id, workspace=str(workspace))
    assert (report.verdict, report.differences) == ("ok", [])
    assert [t.thread_id for t in keeper.threads(workspace=str(workspace))] == [session.thread_id]
