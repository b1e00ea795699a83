"""Importing the agents' files into the index: lazy, incremental, linked, tolerant, redacted."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from sessionkeeper.agents.importer import AgentSources
from sessionkeeper.api import Keeper
from sessionkeeper.errors import InvalidId
from sessionkeeper.redact import redact_text
from sessionkeeper.store.index import ListQuery
from tests.contract._agent_homes import append_title, keeper_of
from tests.unit._agents import AGENT_FIXTURES, codex_home, generator, tree_digest

GEN = generator()



def test_nothing_is_imported_until_threads_are_listed(store_dir: Path) -> None:
    """Fixture: the Codex `intact` fixture home; a Keeper made, then listed."""
    keeper = keeper_of(store_dir, codex=AGENT_FIXTURES / "codex" / "intact")
    assert not (store_dir / "state.db").exists()
    assert [r.thread_id for r in keeper.rows()] == [GEN.CODEX_THREAD]
    assert Keeper(store_dir).rows() == []  # a Keeper without agent sources shows none of them


def test_a_subagent_transcript_is_a_session_of_its_parents_thread(store_dir: Path) -> None:
    """Fixture: the Claude `subagent` home (a Task call with its sub-agent transcript)."""
    keeper = keeper_of(store_dir, claude=AGENT_FIXTURES / "claude" / "subagent")
    [thread] = keeper.rows()
    assert (thread.thread_id, thread.session_count, thread.agent) == (GEN.CLAUDE_SESSION, 2,
                                                                      "claude")
    sessions = keeper.thread_sessions(GEN.CLAUDE_SESSION)
    assert sorted(s.source for s in sessions) == ["startup", "subagent"]
    assert thread.title == "Fix the rounding bug in payment.py"  # the parent's, never the sub-agent's
    report = keeper.check_resume(GEN.CLAUDE_SESSION, workspace="/nonexistent")
    assert any("sub-agent transcript" in note for note in report.notes)


def test_a_second_listing_reads_only_what_was_appended(store_dir: Path, repo: Path,
                                                       tmp_path: Path) -> None:
    """Fixture: `repo` and a Codex home with one thread in it; a line appended between listings."""
    home = codex_home(repo, tmp_path / "codexhome")
    keeper = keeper_of(store_dir, codex=home)
    first = keeper.import_agents(force=True)
    assert first is not None and (first.read, first.threads) == (1, 1)
    again = keeper_of(store_dir, codex=home).import_agents()
    assert again is not None and (again.unchanged, again.read, again.appended) == (1, 0, 0)
    [rollout] = list(home.glob("sessions/**/*.jsonl"))
    with open(rollout, "ab") as handle:
        handle.write(GEN.dump([GEN.cx(40, "event_msg", {"type": "thread_name_updated",
                                                        "thread_name": "later"})]))
    grown = keeper_of(store_dir, codex=home).import_agents()
    assert grown is not None and (grown.appended, grown.read) == (1, 0)
    assert [r.title for r in Keeper(store_dir).store.list_threads(ListQuery())] == ["later"]


def test_one_unreadable_file_never_hides_the_others(store_dir: Path, tmp_path: Path) -> None:
    """Fixture: the Codex `intact` home copied, plus a rollout of NUL bytes and a directory
    named like a rollout."""
    home = Path(shutil.copytree(AGENT_FIXTURES / "codex" / "intact", tmp_path / "codex"))
    day = next(home.glob("sessions/*/*/*"))
    (day / "rollout-2026-11-28T10-00-00-019a7c00-0000-7000-8000-000000000000.jsonl").write_bytes(
        b"\0" * 5000)
    keeper = keeper_of(store_dir, codex=home)
    assert [r.thread_id for r in keeper.rows()] == [GEN.CODEX_THREAD]
    counts = keeper.import_agents(force=True)
    assert counts is not None and counts.unchanged == 2


def test_files_that_are_gone_or_under_roots_no_longer_read_leave_the_index(store_dir: Path,
                                                                          tmp_path: Path) -> None:
    """Fixture: two Codex homes; listed from the first, then pointed at the second."""
    first = Path(shutil.copytree(AGENT_FIXTURES / "codex" / "intact", tmp_path / "one"))
    second = Path(shutil.copytree(AGENT_FIXTURES / "codex" / "archived", tmp_path / "two"))
    assert [r.thread_id for r in keeper_of(store_dir, codex=first).rows()] == [GEN.CODEX_THREAD]
    elsewhere = {r.thread_id for r in keeper_of(store_dir, codex=second).rows(include_archived=True)}
    assert GEN.CODEX_THREAD in elsewhere and len(elsewhere) == 2
    index = Keeper(store_dir).store.index()
    assert {f.root for f in index.agent_files()} == {str(second)}
    for path in second.rglob("*.jsonl*"):
        path.unlink()
    assert keeper_of(store_dir, codex=second).rows(include_archived=True) == []
    assert Keeper(store_dir).store.index().agent_files() == []


def test_a_read_only_store_imports_in_memory_and_the_agent_home_is_never_written(
        store_dir: Path, tmp_path: Path) -> None:
    """Fixture: an existing store opened read-only, and the Claude `intact` home."""
    Keeper(store_dir).rows()  # the store and its index exist
    before_db = (store_dir / "state.db").read_bytes()
    home = AGENT_FIXTURES / "claude" / "intact"
    before_home = tree_digest(home)
    keeper = Keeper(store_dir, read_only=True,
                    agents=AgentSources(agents=("claude",), roots={"claude": (str(home),)}))
    assert [r.agent for r in keeper.rows()] == ["claude"]
    assert keeper.check_resume(GEN.CLAUDE_SESSION, workspace=str(tmp_path)).agent == "claude"
    assert (store_dir / "state.db").read_bytes() == before_db
    assert tree_digest(home) == before_home


def test_resuming_an_agent_thread_through_the_api_never_writes_a_session_of_ours(
        store_dir: Path, repo: Path, tmp_path: Path) -> None:
    """Fixture: `repo` and a Codex home with one thread created in it."""
    keeper = keeper_of(store_dir, codex=codex_home(repo, tmp_path / "codexhome"))
    report, session = keeper.resume(GEN.CODEX_THREAD, workspace=str(repo))
    assert (report.verdict, report.agent, session) == ("ok", "codex", None)
    _, command = keeper.resume_agent(GEN.CODEX_THREAD, workspace=str(repo))
    assert command is not None and command.argv == ["codex", "resume", GEN.CODEX_THREAD]
    assert not list((store_dir / "sessions").rglob("*.jsonl"))


def test_unknown_agent_names_are_refused_with_a_typed_error() -> None:
    """Fixture: none; sources naming an agent that does not exist."""
    with pytest.raises(InvalidId, match="unknown agent 'gemini'"):
        AgentSources(agents=("gemini",))
    with pytest.raises(InvalidId):
        AgentSources(roots={"cursor": ("/x",)})



def test_an_imported_row_shows_the_todo_list_and_keeps_it_across_appends(store_dir: Path,
                                                                          tmp_path: Path) -> None:
    """Fixture: the Claude `intact` home copied (a TodoWrite list, 1 of 3 done); a title line
    appended between listings."""
    home = Path(shutil.copytree(AGENT_FIXTURES / "claude" / "intact", tmp_path / "claude"))
    keeper = keeper_of(store_dir, claude=home)
    [row] = keeper.rows()
    assert row.summary is not None and row.summary["todos"] == {"done": 1, "total": 3}
    append_title(home, "renamed")
    counts = keeper.import_agents(force=True)
    assert counts is not None and (counts.appended, counts.read) == (1, 0)
    [row] = Keeper(store_dir).store.list_threads(ListQuery())
    assert row.title == "renamed"
    assert row.summary is not None and row.summary["todos"] == {"done": 1, "total": 3}


def test_a_root_whose_path_looks_like_a_credential_is_still_read_on_from_its_checkpoint(
        store_dir: Path, tmp_path: Path) -> None:
    """Fixture: the Claude `intact` home copied under a folder named like an OpenAI key (`sk-`
    and a random run of 16+ letters and digits); a title line appended between listings."""
    folder = "sk-bench-agent-index-q9ETG5PSxa81KdPz2mQw"
    assert redact_text(folder) != folder  # the premise: the path itself redacts
    home = Path(shutil.copytree(AGENT_FIXTURES / "claude" / "intact", tmp_path / folder / "claude"))
    keeper = keeper_of(store_dir, claude=home)
    assert [r.thread_id for r in keeper.rows()] == [GEN.CLAUDE_SESSION]
    [stored] = keeper.store.index().agent_files(agent="claude", checkpoints=True)
    assert stored.path.startswith(str(home))  # the row keeps the path as it is
    assert stored.checkpoint is not None and folder not in stored.checkpoint
    assert "REDACTED" not in stored.checkpoint  # nothing in the text looks secret
    append_title(home, "renamed")
    counts = keeper.import_agents(force=True)
    assert counts is not None and (counts.appended, counts.read) == (1, 0)
    assert [r.title for r in Keeper(store_dir).store.list_threads(ListQuery())] == ["renamed"]


def test_a_claude_transcript_is_read_on_from_its_checkpoint_when_codex_is_imported_too(
        store_dir: Path, tmp_path: Path) -> None:
    """Fixture: the Claude and Codex `intact` homes copied, both imported (the default: every
    agent); a title line appended to the Claude transcript between listings."""
    claude = Path(shutil.copytree(AGENT_FIXTURES / "claude" / "intact", tmp_path / "claude"))
    codex = Path(shutil.copytree(AGENT_FIXTURES / "codex" / "intact", tmp_path / "codex"))
    keeper = keeper_of(store_dir, claude=claude, codex=codex)
    assert {r.agent for r in keeper.rows()} == {"claude", "codex"}
    append_title(claude, "renamed")
    counts = keeper.import_agents(force=True)
    assert counts is not None and (counts.appended, counts.read, counts.unchanged) == (1, 0, 1)
    assert "renamed" in {r.title for r in Keeper(store_dir).store.list_threads(ListQuery())}


def test_a_transcript_whose_row_cannot_be_stored_never_hides_the_others(store_dir: Path,
                                                                       tmp_path: Path) -> None:
    """Fixture: the Claude `intact` home copied, plus a crafted transcript of another session
    whose token counts add up beyond 64 bits (two u64-max counts in one usage)."""
    home = Path(shutil.copytree(AGENT_FIXTURES / "claude" / "intact", tmp_path / "claude"))
    other = "6c2e3f40-5b6c-4d7e-8f90-a1b2c3d4e5f6"
    t = GEN.Transcript(session=other)
    big = 2**64 - 1
    crafted = t.assistant(2, 2, 1, "msg_big", GEN.text("ok"))
    crafted["message"]["usage"].update(input_tokens=big, cache_read_input_tokens=big)
    [project] = list(home.glob("projects/*"))
    (project / f"{other}.jsonl").write_bytes(GEN.dump([t.user(1, 1, None, "hi"), crafted]))
    keeper = keeper_of(store_dir, claude=home)
    assert GEN.CLAUDE_SESSION in {r.thread_id for r in keeper.rows()}


def test_a_codex_header_with_fields_of_the_wrong_type_is_listed_and_checked(store_dir: Path,
                                                                           tmp_path: Path) -> None:
    """Fixture: the Codex `intact` home copied, plus a crafted rollout of another thread whose
    session_meta has a number for cwd, an object for git.branch and a list for git.commit_hash."""
    home = Path(shutil.copytree(AGENT_FIXTURES / "codex" / "intact", tmp_path / "codex"))
    other = "019a7c00-2222-7333-8444-555566667777"
    lines = GEN.codex_lines()
    lines[0]["payload"].update(id=other, session_id=other, cwd=5,
                               git={"branch": {"name": "main"}, "commit_hash": ["1" * 40]})
    day = next(home.glob("sessions/*/*/*"))
    (day / f"rollout-2026-11-28T10-00-00-{other}.jsonl").write_bytes(GEN.dump(lines[:1]))
    keeper = keeper_of(store_dir, codex=home)
    rows = {r.thread_id: r for r in keeper.rows()}
    assert set(rows) == {GEN.CODEX_THREAD, other}
    assert (rows[other].cwd, rows[other].branch) == (None, None)
    report = keeper.check_resume(other, workspace=str(tmp_path))
    assert report.verdict == "blocked"  # a typed verdict (tmp_path is in no repository)


def test_token_counts_beyond_any_model_call_are_no_count_and_the_session_is_listed(
        store_dir: Path, tmp_path: Path) -> None:
    """Fixture: a crafted Claude transcript whose usage holds two u64-max counts and a negative
    one, and a crafted Codex rollout whose token_count says u64-max twice."""
    big = 2**64 - 1
    session = "6c2e3f40-5b6c-4d7e-8f90-a1b2c3d4e5f6"
    t = GEN.Transcript(session=session)
    crafted = t.assistant(2, 2, 1, "msg_big", GEN.text("ok"))
    crafted["message"]["usage"].update(input_tokens=big, cache_read_input_tokens=big,
                                       output_tokens=-7, cache_creation_input_tokens=5)
    claude = tmp_path / "claude" / "projects" / "-work-repo-a"
    claude.mkdir(parents=True)
    (claude / f"{session}.jsonl").write_bytes(GEN.dump([t.user(1, 1, None, "hi"), crafted]))
    lines = GEN.codex_lines()[:1]
    usage = {"input_tokens": big, "output_tokens": big}
    lines += [GEN.cx(3 + i, "event_msg", {"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": big, "output_tokens": i},
        "last_token_usage": usage}}) for i in range(2)]
    codex = tmp_path / "codex" / GEN.CODEX_DAY
    codex.mkdir(parents=True)
    (codex / GEN.CODEX_NAME).write_bytes(GEN.dump(lines))
    keeper = keeper_of(store_dir, claude=tmp_path / "claude", codex=tmp_path / "codex")
    assert {r.thread_id for r in keeper.rows()} == {session, GEN.CODEX_THREAD}
    for thread in (session, GEN.CODEX_THREAD):
        report = keeper.check_resume(thread, workspace=str(tmp_path))
        orjson.dumps(report.to_json())  # every number in the report fits in 64 bits
    claude_cost = keeper.check_resume(session, workspace=str(tmp_path)).to_json()
    assert "18446744073709551615" not in orjson.dumps(claude_cost).decode()


def test_a_file_another_process_imported_meanwhile_keeps_its_row_s_todo_list(
        store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: the Claude `intact` home copied (a TodoWrite list, 1 of 3 done) and listed; a
    title appended; a second process (a real child Python) imports it right after this one's
    stat pass planned to read it, so this one finds the file as that process left it."""
    import subprocess
    import sys

    from sessionkeeper.agents.claude import ClaudeAgent

    home = Path(shutil.copytree(AGENT_FIXTURES / "claude" / "intact", tmp_path / "claude"))
    keeper = keeper_of(store_dir, claude=home)
    [row] = keeper.rows()
    assert row.summary is not None and row.summary["todos"] == {"done": 1, "total": 3}
    append_title(home, "renamed")
    other = ("from sessionkeeper.api import Keeper\n"
             "from sessionkeeper.agents.importer import AgentSources\n"
             f"Keeper({str(store_dir)!r}, agents=AgentSources(agents=('claude',), "
             f"roots={{'claude': ({str(home)!r},)}})).import_agents(force=True)\n")
    planned = ClaudeAgent.changes

    def changes_then_the_other_process(self: ClaudeAgent, *args: object, **kwargs: object) -> object:
        found = planned(self, *args, **kwargs)  # type: ignore[arg-type]
        subprocess.run([sys.executable, "-c", other], check=True)
        return found

    monkeypatch.setattr(ClaudeAgent, "changes", changes_then_the_other_process)
    keeper.import_agents(force=True)
    [row] = Keeper(store_dir).store.list_threads(ListQuery())
    assert row.title == "renamed"
    assert row.summary is not None and row.summary["todos"] == {"done": 1, "total": 3}


def test_a_change_seen_by_the_roots_watcher_during_an_import_is_imported_next(
        store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: the Claude `intact` home copied, listed by a Keeper whose roots are watched (as
    the editor's watcher makes it); a title appended, and while the next import runs (after it
    read the file) another title is appended and the watcher reports it."""
    from sessionkeeper.agents.claude import ClaudeAgent

    home = Path(shutil.copytree(AGENT_FIXTURES / "claude" / "intact", tmp_path / "claude"))
    keeper = keeper_of(store_dir, claude=home)
    keeper.watching_agents = True
    keeper.rows()
    append_title(home, "first")
    keeper.agents_changed()
    reads = ClaudeAgent.read

    def read_then_another_write(self: ClaudeAgent, *args: object, **kwargs: object) -> object:
        found = reads(self, *args, **kwargs)  # type: ignore[arg-type]
        monkeypatch.setattr(ClaudeAgent, "read", reads)
        append_title(home, "second")
        keeper.agents_changed()  # the watcher thread saw the write
        return found

    monkeypatch.setattr(ClaudeAgent, "read", read_then_another_write)
    assert [r.title for r in keeper.rows()] == ["first"]
    assert [r.title for r in keeper.rows()] == ["second"]
