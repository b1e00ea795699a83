"""An agent session whose repository folder was renamed is a relocation, also when Session Keeper
first sees the session after the rename (issue 31): the identity the log never recorded is
rebuilt from the commits it names, in the repository checked."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sessionkeeper.agents.claude_files import recent_commits
from sessionkeeper.agents.importer import AgentSources
from sessionkeeper.api import Keeper
from sessionkeeper.recovery.identity import NamedCommit, rebuild
from tests.conftest import git, init_repo
from tests.unit._agents import generator

GEN = generator()


def _keeper(store: Path, **roots: Path) -> Keeper:
    return Keeper(store, agents=AgentSources(agents=tuple(roots),
                                             roots={k: (str(v),) for k, v in roots.items()}))


def _git_status(repo: Path) -> str:
    """Claude Code's gitStatus context of a session started in `repo` (as 2.1.332 writes it)."""
    log = git(repo, "log", "--oneline", "-n", "5").strip()
    return ("This is the git status at the start of the conversation. Note that this status is a "
            "snapshot in time, and will not update during the conversation.\n\nCurrent branch: "
            f"main\n\nMain branch (you will usually use this for PRs): main\n\nStatus:\n(clean)\n\n"
            f"Recent commits:\n{log}")


def _claude_session(repo: Path, home: Path, *, git_status: str | None = None) -> None:
    """A Claude transcript of the generator's session run in `repo`, with the session_context
    attachment Claude Code writes after the first prompt (its gitStatus)."""
    transcript = GEN.Transcript(cwd=str(repo), branch="main")
    lines = GEN.claude_lines(transcript)
    context = transcript.line(1, "attachment", 50, 2, attachment={
        "type": "session_context", "context": {"gitStatus": git_status or _git_status(repo)}})
    project = home / "projects" / ("-" + str(repo).strip("/").replace("/", "-"))
    project.mkdir(parents=True)
    (project / f"{GEN.CLAUDE_SESSION}.jsonl").write_bytes(GEN.dump(lines[:3] + [context]
                                                                   + lines[3:]))


def _codex_session(repo: Path, home: Path) -> None:
    """A Codex rollout created in `repo` (its HEAD and branch in session_meta.git, no remote)."""
    lines = GEN.codex_lines(str(repo))
    lines[0]["payload"]["git"] = {"commit_hash": git(repo, "rev-parse", "HEAD").strip(),
                                  "branch": "main"}
    day = home / GEN.CODEX_DAY
    day.mkdir(parents=True)
    (day / GEN.CODEX_NAME).write_bytes(GEN.dump(lines))


_THREAD = {"claude": GEN.CLAUDE_SESSION, "codex": GEN.CODEX_THREAD}


@pytest.mark.parametrize("listed", [True, False], ids=["listed-before-the-rename", "never-listed"])
@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_session_in_a_renamed_repository_is_a_relocation(store_dir: Path, tmp_path: Path,
                                                           agent: str, listed: bool) -> None:
    """Fixture: a real repository `proj` (two commits, no remote) and a session of `agent` run
    there; the folder renamed to `proj-renamed`, after a listing or before any."""
    work = init_repo(tmp_path / "proj", {"a.py": "a = 1\n"})
    (work / "a.py").write_text("a = 2\n")
    git(work, "commit", "-qam", "second")
    home = tmp_path / agent
    (_claude_session if agent == "claude" else _codex_session)(work, home)
    keeper = _keeper(store_dir, **{agent: home})
    if listed:
        assert [r.thread_id for r in keeper.rows()] == [_THREAD[agent]]
    renamed = work.with_name("proj-renamed")
    os.rename(work, renamed)
    report = keeper.check_resume(_THREAD[agent], workspace=str(renamed))
    assert (report.verdict, [(d.kind, d.recorded, d.current) for d in report.differences]) == (
        "drift", [("relocated", os.path.realpath(work), os.path.realpath(renamed))])
    assert report.facts["identity"]["origin"] == ("index" if listed else "workspace")
    lost = keeper.check_resume(_THREAD[agent], workspace=str(work))
    assert (lost.verdict, lost.relocate_to) == ("blocked", os.path.realpath(renamed))


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_session_checked_in_another_repository_is_still_blocked_and_says_why(
        store_dir: Path, tmp_path: Path, agent: str) -> None:
    """Fixture: a session of `agent` run in a real repository `proj`, which is then gone; the
    check is made in another repository `other` (other root commit) next to it."""
    work = init_repo(tmp_path / "proj", {"a.py": "a = 1\n"})
    home = tmp_path / agent
    (_claude_session if agent == "claude" else _codex_session)(work, home)
    other = init_repo(tmp_path / "other", {"b.py": "b = 1\n"}, message="another project")
    shutil.rmtree(work)
    keeper = _keeper(store_dir, **{agent: home})
    report = keeper.check_resume(_THREAD[agent], workspace=str(other))
    assert report.verdict == "blocked"
    assert [d.kind for d in report.differences] == ["other_repository"]
    assert any("could not be rebuilt" in note for note in report.notes), report.notes
    assert "identity" not in report.facts or report.facts["identity"]["origin"] != "workspace"
    lost = keeper.check_resume(_THREAD[agent], workspace=str(work))
    assert (lost.verdict, lost.relocate_to) == ("blocked", None)


def test_a_short_sha_identifies_a_repository_only_with_its_recorded_subject(repo: Path) -> None:
    """Fixture: `repo` (one commit, "initial")."""
    head = git(repo, "rev-parse", "HEAD").strip()
    roots = [head]
    found = rebuild(str(repo), [NamedCommit(head[:7], "initial")])
    assert found is not None and found.identity.root_commits == roots
    assert rebuild(str(repo), [NamedCommit(head[:7], "another subject")]) is None
    assert rebuild(str(repo), [NamedCommit(head)]) is not None  # a full SHA needs no subject
    assert rebuild(str(repo), [NamedCommit("0" * 40)]) is None


def test_a_named_commit_that_is_not_hex_never_reaches_git(repo: Path, tmp_path: Path) -> None:
    """Fixture: `repo`; names a crafted log could hold (an option, a ref, a revision range)."""
    out = tmp_path / "written-by-git"
    names = [f"--output={out}", "HEAD", "main", "HEAD~1..HEAD", "abc"]
    assert rebuild(str(repo), [NamedCommit(n) for n in names]) is None
    assert not out.exists()


def test_claude_s_recent_commits_are_read_from_its_git_status() -> None:
    """Fixture: gitStatus texts as Claude Code writes them (and damaged ones)."""
    text = ("Current branch: main\n\nStatus:\n M a.py\n\nRecent commits:\n5852410 second\n"
            "a19c52e init\n\nsomething after")
    assert recent_commits(text) == [{"commit": "5852410", "subject": "second"},
                                    {"commit": "a19c52e", "subject": "init"}]
    assert recent_commits("Current branch: main\n\nStatus:\n(clean)") == []
    assert recent_commits("x\nRecent commits:\nnot a commit line") == []
    assert recent_commits(None) == recent_commits(7) == []


def test_a_codex_session_checked_in_a_shallow_clone_gets_no_false_note(store_dir: Path,
                                                                      tmp_path: Path) -> None:
    """Fixture: a Codex session in a real repository `proj` (three commits), then gone; a
    depth-1 clone of it (its HEAD the recorded one, its history cut) is checked."""
    work = init_repo(tmp_path / "proj", {"a.py": "a = 1\n"})
    for n in (2, 3):
        (work / "a.py").write_text(f"a = {n}\n")
        git(work, "commit", "-qam", f"change {n}")
    _codex_session(work, tmp_path / "codex")
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{work}", str(clone))
    shutil.rmtree(work)
    report = _keeper(store_dir, codex=tmp_path / "codex").check_resume(GEN.CODEX_THREAD,
                                                                      workspace=str(clone))
    assert [(d.kind, d.detail) for d in report.differences] == [
        ("other_repository", "another path, and no root commit or origin URL on both sides "
                             "to compare")]
    assert not any("could not be rebuilt" in note for note in report.notes)


def test_commits_listed_at_another_place_than_the_baseline_never_identify_it() -> None:
    """Fixture: a session_meta whose commits were listed in /a while its baseline is /b."""
    from sessionkeeper.recovery.subsystems.worktree import Worktree

    worktree = Worktree()
    meta = {"type": "session_meta", "seq": 0, "cwd": "/b",
            "baseline": {"repo_root": "/b", "worktree": "/b", "identity": None, "branch": "main",
                         "head": None},
            "data": {"unknown": ["head"], "commits": {"cwd": "/a", "commits": [
                {"commit": "5852410", "subject": "second"}]}}}
    worktree.apply(meta)
    assert worktree.named_commits() == []
    worktree.apply({**meta, "data": {**meta["data"], "commits": {"cwd": "/b/", "commits": [
        {"commit": "5852410", "subject": "second"}]}}})
    assert worktree.named_commits() == [NamedCommit("5852410", "second")]
    worktree.apply({"type": "baseline", "seq": 3, **meta["baseline"], "branch": "other",
                    "data": {"unknown": ["head"]}})
    assert worktree.named_commits() == [NamedCommit("5852410", "second")]  # kept: same place
