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
from tests.unit._agents import AGENT_FIXTURES, codex_home, generator, tree_digest

GEN = generator()


def _keeper(store: Path, **roots: Path) -> Keeper:
    return Keeper(store, agents=AgentSources(agents=tuple(roots),
                                             roots={k: (str(v),) for k, v in roots.items()}))


def test_nothing_is_imported_until_threads_are_listed(store_dir: Path) -> None:
    """Fixture: the Codex `intact` fixture home; a Keeper made, then listed."""
    keeper = _keeper(store_dir, codex=AGENT_FIXTURES / "codex" / "intact")
    assert not (store_dir / "state.db").exists()
    assert [r.thread_id for r in keeper.rows()] == [GEN.CODEX_THREAD]
    assert Keeper(store_dir).rows() == []  # a Keeper without agent sources shows none of them


def test_a_subagent_transcript_is_a_session_of_its_parents_thread(store_dir: Path) -> None:
    """Fixture: the Claude `subagent` home (a Task call with its sub-agent transcript)."""
    keeper = _keeper(store_dir, claude=AGENT_FIXTURES / "claude" / "subagent")
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
    keeper = _keeper(store_dir, codex=home)
    first = keeper.import_agents(force=True)
    assert first is not None and (first.read, first.threads) == (1, 1)
    again = _keeper(store_dir, codex=home).import_agents()
    assert again is not None and (again.unchanged, again.read, again.appended) == (1, 0, 0)
    [rollout] = list(home.glob("sessions/**/*.jsonl"))
    with open(rollout, "ab") as handle:
        handle.write(GEN.dump([GEN.cx(40, "event_msg", {"type": "thread_name_updated",
                                                        "thread_name": "later"})]))
    grown = _keeper(store_dir, codex=home).import_agents()
    assert grown is not None and (grown.appended, grown.read) == (1, 0)
    assert [r.title for r in Keeper(store_dir).store.list_threads(ListQuery())] == ["later"]


def test_one_unreadable_file_never_hides_the_others(store_dir: Path, tmp_path: Path) -> None:
    """Fixture: the Codex `intact` home copied, plus a rollout of NUL bytes and a directory
    named like a rollout."""
    home = Path(shutil.copytree(AGENT_FIXTURES / "codex" / "intact", tmp_path / "codex"))
    day = next(home.glob("sessions/*/*/*"))
    (day / "rollout-2026-11-28T10-00-00-019a7c00-0000-7000-8000-000000000000.jsonl").write_bytes(
        b"\0" * 5000)
    keeper = _keeper(store_dir, codex=home)
    assert [r.thread_id for r in keeper.rows()] == [GEN.CODEX_THREAD]
    counts = keeper.import_agents(force=True)
    assert counts is not None and counts.unchanged == 2


def test_files_that_are_gone_or_under_roots_no_longer_read_leave_the_index(store_dir: Path,
                                                                          tmp_path: Path) -> None:
    """Fixture: two Codex homes; listed from the first, then pointed at the second."""
    first = Path(shutil.copytree(AGENT_FIXTURES / "codex" / "intact", tmp_path / "one"))
    second = Path(shutil.copytree(AGENT_FIXTURES / "codex" / "archived", tmp_path / "two"))
    assert [r.thread_id for r in _keeper(store_dir, codex=first).rows()] == [GEN.CODEX_THREAD]
    elsewhere = {r.thread_id for r in _keeper(store_dir, codex=second).rows(include_archived=True)}
    assert GEN.CODEX_THREAD in elsewhere and len(elsewhere) == 2
    index = Keeper(store_dir).store.index()
    assert {f.root for f in index.agent_files()} == {str(second)}
    for path in second.rglob("*.jsonl*"):
        path.unlink()
    assert _keeper(store_dir, codex=second).rows(include_archived=True) == []
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
    keeper = _keeper(store_dir, codex=codex_home(repo, tmp_path / "codexhome"))
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


def _append_title(root: Path, title: str) -> None:
    [transcript] = list(root.glob("projects/*/*.jsonl"))
    with open(transcript, "ab") as handle:
        handle.write(orjson.dumps({"type": "custom-title", "customTitle": title,
                                   "sessionId": GEN.CLAUDE_SESSION}) + b"\n")


def test_an_imported_row_shows_the_todo_list_and_keeps_it_across_appends(store_dir: Path,
                                                                          tmp_path: Path) -> None:
    """Fixture: the Claude `intact` home copied (a TodoWrite list, 1 of 3 done); a title line
    appended between listings."""
    home = Path(shutil.copytree(AGENT_FIXTURES / "claude" / "intact", tmp_path / "claude"))
    keeper = _keeper(store_dir, claude=home)
    [row] = keeper.rows()
    assert row.summary is not None and row.summary["todos"] == {"done": 1, "total": 3}
    _append_title(home, "renamed")
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
    keeper = _keeper(store_dir, claude=home)
    assert [r.thread_id for r in keeper.rows()] == [GEN.CLAUDE_SESSION]
    [stored] = keeper.store.index().agent_files(agent="claude", checkpoints=True)
    assert stored.path.startswith(str(home))  # the row keeps the path as it is
    assert stored.checkpoint is not None and folder not in stored.checkpoint
    assert "REDACTED" not in stored.checkpoint  # nothing in the text looks secret
    _append_title(home, "renamed")
    counts = keeper.import_agents(force=True)
    assert counts is not None and (counts.appended, counts.read) == (1, 0)
    assert [r.title for r in Keeper(store_dir).store.list_threads(ListQuery())] == ["renamed"]
