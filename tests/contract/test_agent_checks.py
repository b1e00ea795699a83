"""Checking the agents' threads against the workspace: the baseline of their own files, a folder that
now holds another repository, a session outside git or on a detached HEAD, a damaged rollout."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sessionkeeper.errors import AgentLogUnreadable
from tests.conftest import git, init_repo
from tests.contract._agent_homes import append_title, keeper_of
from tests.unit._agents import AGENT_FIXTURES, generator

GEN = generator()


def test_a_codex_thread_whose_folder_now_holds_another_repository_is_blocked(
        store_dir: Path, tmp_path: Path) -> None:
    """Fixture: a Codex rollout created in a real repository (origin A, its HEAD and branch in
    session_meta.git); the folder then replaced by another repository (origin B) on the same
    branch before Session Keeper first imported it."""
    work = tmp_path / "proj"
    init_repo(work, {"a.py": "a = 1\n"})
    git(work, "remote", "add", "origin", "https://example.invalid/org/a.git")
    head = git(work, "rev-parse", "HEAD").strip()
    lines = GEN.codex_lines(str(work))
    lines[0]["payload"]["git"] = {"commit_hash": head, "branch": "main",
                                  "repository_url": "https://example.invalid/org/a.git"}
    day = tmp_path / "codex" / GEN.CODEX_DAY
    day.mkdir(parents=True)
    (day / GEN.CODEX_NAME).write_bytes(GEN.dump(lines))
    shutil.rmtree(work)
    init_repo(work, {"b.py": "b = 2\n"}, message="another project")
    git(work, "remote", "add", "origin", "https://example.invalid/org/b.git")
    keeper = keeper_of(store_dir, codex=tmp_path / "codex")
    assert [r.thread_id for r in keeper.rows()] == [GEN.CODEX_THREAD]
    report = keeper.check_resume(GEN.CODEX_THREAD, workspace=str(work))
    assert report.verdict == "blocked"
    assert [d.kind for d in report.differences] == ["other_repository"]


def test_checking_a_thread_whose_zstd_rollout_got_damaged_is_a_typed_error(store_dir: Path,
                                                                           tmp_path: Path) -> None:
    """Fixture: the Codex `zst` home copied and listed; its `.jsonl.zst` then overwritten with
    bytes zstd cannot decode (a plain text line)."""
    home = Path(shutil.copytree(AGENT_FIXTURES / "codex" / "zst", tmp_path / "codex"))
    keeper = keeper_of(store_dir, codex=home)
    assert [r.thread_id for r in keeper.rows()] == [GEN.CODEX_THREAD]
    [rollout] = list(home.rglob("*.jsonl.zst"))
    rollout.write_bytes(b"not zstd\n")
    with pytest.raises(AgentLogUnreadable, match="not a readable zstd stream"):
        keeper.check_resume(GEN.CODEX_THREAD, workspace=str(tmp_path))
    counts = keeper.import_agents(force=True)
    assert counts is not None and counts.unreadable == 1


def _claude_session_outside_git(tmp_path: Path) -> Path:
    """A plain folder `scratch` (no repository) and, under `tmp_path/claude`, a Claude transcript
    of a session run there whose lines say gitBranch "HEAD" (as Claude Code 2.1.332 writes)."""
    plain = tmp_path / "scratch"
    plain.mkdir()
    transcript = GEN.Transcript(cwd=str(plain), branch="HEAD")
    project = tmp_path / "claude" / "projects" / "-scratch"
    project.mkdir(parents=True)
    (project / f"{GEN.CLAUDE_SESSION}.jsonl").write_bytes(GEN.dump(GEN.claude_lines(transcript)))
    return plain


def test_a_claude_session_outside_git_checked_in_place_is_ok(store_dir: Path,
                                                             tmp_path: Path) -> None:
    """Fixture: a plain folder (no repository) and a Claude transcript of a session run there,
    its lines saying gitBranch "HEAD" (what Claude Code 2.1.332 writes outside git); then a
    repository is made in that folder."""
    plain = _claude_session_outside_git(tmp_path)
    keeper = keeper_of(store_dir, claude=tmp_path / "claude")
    assert [r.thread_id for r in keeper.rows()] == [GEN.CLAUDE_SESSION]
    report = keeper.check_resume(GEN.CLAUDE_SESSION, workspace=str(plain))
    assert (report.verdict, report.differences) == ("ok", [])
    git(plain, "init", "-q", "-b", "main")
    (plain / "a.py").write_text("a\n")
    git(plain, "add", ".")
    git(plain, "commit", "-qm", "first")
    report = keeper.check_resume(GEN.CLAUDE_SESSION, workspace=str(plain))
    assert report.verdict == "blocked"
    assert [d.detail for d in report.differences] == ["recorded outside git"]


def test_a_claude_session_on_a_detached_head_checked_in_place_is_ok(store_dir: Path,
                                                                    tmp_path: Path) -> None:
    """Fixture: a real repository with its HEAD detached and a Claude transcript of a session
    run there (gitBranch "HEAD")."""
    work = init_repo(tmp_path / "work", {"a.py": "a\n"})
    git(work, "checkout", "-q", "--detach")
    transcript = GEN.Transcript(cwd=str(work), branch="HEAD")
    project = tmp_path / "claude" / "projects" / "-work"
    project.mkdir(parents=True)
    (project / f"{GEN.CLAUDE_SESSION}.jsonl").write_bytes(GEN.dump(GEN.claude_lines(transcript)))
    keeper = keeper_of(store_dir, claude=tmp_path / "claude")
    report = keeper.check_resume(GEN.CLAUDE_SESSION, workspace=str(work))
    assert (report.verdict, report.differences) == ("ok", [])


def test_a_codex_thread_resumed_in_another_repository_keeps_the_creation_baseline_apart(
        store_dir: Path, tmp_path: Path) -> None:
    """Fixture: a Codex rollout created in a real repository A (its HEAD and branch in
    session_meta.git), whose later turn_context ran in another real repository B (a resume
    there; Codex never updates the git block)."""
    first = init_repo(tmp_path / "a", {"a.py": "a\n"})
    second = init_repo(tmp_path / "b", {"b.py": "b\n"}, message="another project")
    lines = GEN.codex_lines(str(first))
    lines[0]["payload"]["git"] = {"commit_hash": git(first, "rev-parse", "HEAD").strip(),
                                  "branch": "main"}
    lines.append(GEN.cx(50, "turn_context", {"cwd": str(second), "model": "gpt-5",
                                             "approval_policy": "never",
                                             "sandbox_policy": {"type": "danger-full-access"}}))
    day = tmp_path / "codex" / GEN.CODEX_DAY
    day.mkdir(parents=True)
    (day / GEN.CODEX_NAME).write_bytes(GEN.dump(lines))
    keeper = keeper_of(store_dir, codex=tmp_path / "codex")
    assert [r.cwd for r in keeper.rows()] == [str(second)]
    there = keeper.check_resume(GEN.CODEX_THREAD, workspace=str(second))
    assert (there.verdict, [d.kind for d in there.differences]) == ("blocked", ["other_repository"])
    back = keeper.check_resume(GEN.CODEX_THREAD, workspace=str(first))
    assert back.verdict == "drift"
    assert all(d.kind != "other_repository" for d in back.differences)
    assert str(second) not in str(there.to_json()["differences"][0]["recorded"])


def test_a_repository_made_in_a_session_s_folder_is_remembered_once_the_session_goes_on(
        store_dir: Path, tmp_path: Path) -> None:
    """Fixture: a Claude transcript of a session in a plain folder (gitBranch "HEAD"), listed;
    then `git init` and a commit there, and the session goes on (a title appended)."""
    plain = _claude_session_outside_git(tmp_path)
    keeper = keeper_of(store_dir, claude=tmp_path / "claude")
    [row] = keeper.rows()
    assert row.summary is not None and row.summary["identity"]["outside_git"] is True
    git(plain, "init", "-q", "-b", "main")
    (plain / "a.py").write_text("a\n")
    git(plain, "add", ".")
    git(plain, "commit", "-qm", "first")
    append_title(tmp_path / "claude", "went on")
    keeper.import_agents(force=True)
    [row] = keeper.rows()
    assert row.summary is not None and row.summary["identity"]["root_commits"] == [
        git(plain, "rev-parse", "HEAD").strip()]
