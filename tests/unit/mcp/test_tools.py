"""The MCP tools as plain Python over a Keeper (no stdio): each answers from the session's hook
journal — written here by the real hooks, in-process, in real git repositories — through the
recovery contract, and refuses bad input with a typed error."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import ToolInputInvalid, ToolNotAllowed, UnknownThread
from sessionkeeper.mcp.target import CLAUDE_SESSION_ENV, CODEX_TURN_META, Caller
from sessionkeeper.mcp.tools import Tools
from tests.conftest import git, open_files
from tests.unit._hooks import SID, call

NO_POLICY = {"GIT_CONFIG_GLOBAL": "/dev/null"}


def _tools(store: Path, repo: Path, *, env: dict[str, str] | None = None,
           agent: str | None = "claude", session: str | None = SID) -> Tools:
    caller = Caller(agent=agent, session_id=session, workspace=str(repo))
    return Tools(Keeper(store, read_only=True), caller, env={**NO_POLICY, **(env or {})},
                 writable=lambda: Keeper(store))


def _bash(repo: Path, store: Path, command: str, call_id: str, *, run: bool = True,
          agent: str = "claude") -> None:
    """One shell call through the hooks: PreToolUse, the command (really run), PostToolUse."""
    import subprocess

    tool = "Bash"
    call(agent, "PreToolUse", repo, store, tool_name=tool, tool_input={"command": command},
         tool_use_id=call_id)
    if run:
        subprocess.run(["bash", "-c", command], cwd=repo, check=True, capture_output=True,
                       env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_GLOBAL": "/dev/null",
                            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                            "GIT_COMMITTER_EMAIL": "t@x"})
        call(agent, "PostToolUse", repo, store, tool_name=tool, tool_input={"command": command},
             tool_use_id=call_id, tool_response={"stdout": ""})


@pytest.fixture
def started(repo: Path, store_dir: Path) -> Path:
    """`repo` with a Claude Code session started by its hook (journal in `store_dir`)."""
    call("claude", "SessionStart", repo, store_dir, source="startup")
    return repo


def _tree(root: Path) -> dict[str, str]:
    """{path: sha256} under `root`, SQLite's -shm files aside (the wal-index WAL readers update)."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith("-shm")}


def test_drift_since_names_a_branch_switch_by_the_agents_tool_call(started: Path,
                                                                   store_dir: Path) -> None:
    """`started`; the agent's shell call switches the branch and edits a file."""
    _bash(started, store_dir, "git checkout -q -b other && echo x >> payment.py", "toolu_sw")
    out = _tools(store_dir, started).drift_since(0)
    assert out["branch"]["then"] == "fix/payment" and out["branch"]["now"] == "other"
    [step] = out["branch"]["steps"]
    assert "the agent: tool call toolu_sw (Bash: git checkout -q -b other" in step["by"]
    [changed] = out["files"]
    assert changed["path"] == "payment.py" and changed["by"] == ["agent"]
    assert changed["disk"] == "as the session last recorded it"
    assert out["summary"][0].startswith("branch: fix/payment → other (by the agent: tool call toolu_sw")
    assert "head" not in out  # the same commit


def test_drift_since_says_a_switch_outside_the_session_was_never_recorded(
        started: Path, store_dir: Path) -> None:
    """`started`; someone commits on another branch while the session runs (no hook sees it)."""
    git(started, "checkout", "-q", "-b", "hotfix")
    (started / "payment.py").write_text("def charge(amount):\n    return round(amount)\n")
    git(started, "commit", "-qam", "round the amount")
    out = _tools(store_dir, started).drift_since("session_start")
    assert [s["by"] for s in out["branch"]["steps"]] == [
        "outside the session (it has not recorded this change)"]
    assert out["head"]["moved"].startswith("1 commit(s) ahead of the recorded HEAD")
    assert "round the amount" in out["head"]["moved"]
    assert out["changed"] is True and out["files"] == []  # payment.py: the session never changed it


def test_drift_since_last_turn_starts_at_the_latest_prompt(started: Path, store_dir: Path) -> None:
    """`started`; a first turn edits README, the prompt hook starts a second turn that edits
    payment.py: since the last turn only the second edit counts."""
    call("claude", "UserPromptSubmit", started, store_dir, prompt="one")
    _bash(started, store_dir, "echo a > README", "toolu_1")
    call("claude", "UserPromptSubmit", started, store_dir, prompt="two")
    _bash(started, store_dir, "echo b >> payment.py", "toolu_2")
    out = _tools(store_dir, started).drift_since("last_turn")
    assert out["since"]["what"] == "the start of the current turn (the user's latest prompt)"
    assert [f["path"] for f in out["files"]] == ["payment.py"]
    assert out["files"][0]["versions"][0]["after"].startswith("tool call toolu_2 (Bash: echo b")
    whole = _tools(store_dir, started).drift_since(0)
    assert [f["path"] for f in whole["files"]] == ["README", "payment.py"]


def test_codex_names_its_session_and_turn_in_the_calls_meta(repo: Path, store_dir: Path) -> None:
    """`repo`; a Codex session started by its hook, a file written outside it; the server knows
    no session id: the call's `_meta` names it, and when its turn started."""
    sid = "0a1b2c3d-4e5f-4a6b-8c9d-0e1f2a3b4c5d"
    call("codex", "SessionStart", repo, store_dir, source="startup", session_id=sid)
    meta = {CODEX_TURN_META: {"session_id": sid, "turn_started_at_unix_ms": 4102444800000}}
    out = _tools(store_dir, repo, agent=None, session=None).drift_since(meta=meta)
    assert out["session"]["agent"] == "codex" and out["session"]["session_id"] == sid
    assert out["session"]["found"] == "the Codex session making this call"
    assert out["since"]["at"] == "2100-01-01T00:00:00.000Z"


def test_claude_names_its_session_in_the_servers_environment(started: Path,
                                                            store_dir: Path) -> None:
    """`started`; the server was started by Claude Code (its session id in the environment)."""
    out = _tools(store_dir, started, agent=None, session=None,
                 env={CLAUDE_SESSION_ENV: SID}).todos()
    assert out["session"]["session_id"] == SID
    assert out["session"]["found"] == "the Claude Code session that started the server"


def test_after_a_clear_the_call_itself_names_the_new_claude_session(started: Path,
                                                                   store_dir: Path) -> None:
    """`started`; /clear in the same Claude Code process: a new session id (its journal started
    by SessionStart clear), while the server's environment keeps the old one; the call's
    `_meta` names its tool_use id, which the new session's PreToolUse hook recorded."""
    new = "6d8c2f3b-4e5a-4b6c-9d0e-1f2a3b4c5d6e"
    call("claude", "SessionStart", started, store_dir, source="clear", session_id=new)
    call("claude", "PreToolUse", started, store_dir, session_id=new, tool_name="mcp__sessionkeeper__todos",
         tool_input={}, tool_use_id="toolu_now")
    tools = _tools(store_dir, started, agent=None, session=None, env={CLAUDE_SESSION_ENV: SID})
    out = tools.todos(meta={"claudecode/toolUseId": "toolu_now"})
    assert out["session"]["session_id"] == new and "/clear" in out["session"]["found"]
    assert tools.todos(meta={"claudecode/toolUseId": "toolu_elsewhere"})["session"]["session_id"] == SID


def test_without_a_session_id_the_workspaces_newest_journal_answers(started: Path,
                                                                   store_dir: Path) -> None:
    """`started`; nobody names the session."""
    out = _tools(store_dir, started, agent=None, session=None).verifier()
    assert out["session"]["session_id"] == SID
    assert out["session"]["found"].startswith("the newest claude session recorded in")


def test_an_unknown_session_is_an_error_saying_what_to_do(started: Path, store_dir: Path,
                                                          tmp_path: Path) -> None:
    """`started`; another session id, then a workspace nobody recorded."""
    with pytest.raises(UnknownThread, match="hooks were not installed when it started"):
        _tools(store_dir, started, session="9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b").todos()
    with pytest.raises(ToolInputInvalid, match="not an agent session id"):
        _tools(store_dir, started, session="../../etc").todos()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(UnknownThread, match="sessionkeeper hooks install"):
        _tools(store_dir, elsewhere, agent=None, session=None).todos()


@pytest.mark.parametrize("since", [10_000, -1, "yesterday", True])
def test_a_since_the_session_does_not_have_is_a_tool_input_error(started: Path, store_dir: Path,
                                                                 since: Any) -> None:
    """`started`; seqs beyond it, negative, a word it does not know, a boolean."""
    with pytest.raises(ToolInputInvalid):
        _tools(store_dir, started).drift_since(since)


def test_drift_since_with_nothing_changed_says_so(started: Path, store_dir: Path) -> None:
    """`started`; nothing happens."""
    out = _tools(store_dir, started).drift_since(0)
    assert out["changed"] is False and out["summary"][0].startswith("nothing changed since seq 0")


def test_drift_since_a_seq_before_the_snapshot_reads_the_whole_journal(started: Path,
                                                                      store_dir: Path) -> None:
    """`started`; the agent switches branch, the journal snapshots, then edits a file."""
    _bash(started, store_dir, "git checkout -q -b early", "toolu_e")
    journal = Keeper(store_dir).journal("claude", SID)
    journal.snapshot()
    journal.close()
    _bash(started, store_dir, "echo late >> payment.py", "toolu_l")
    tools = _tools(store_dir, started)
    assert tools.reader.replayed(tools.session(None)[0]).rollouts[0].from_snapshot
    out = tools.drift_since(0)
    assert out["branch"]["now"] == "early" and "toolu_e" in out["branch"]["steps"][0]["by"]
    assert [f["path"] for f in out["files"]] == ["payment.py"]


def test_in_doubt_operations_lists_a_cut_call_with_its_arguments_and_what_to_check(
        started: Path, store_dir: Path) -> None:
    """`started`; a shell call starts (PreToolUse) and never finishes; then a call of this
    server's own tool starts (the one asking)."""
    _bash(started, store_dir, "make deploy", "toolu_cut", run=False)
    call("claude", "PreToolUse", started, store_dir, tool_name="mcp__sessionkeeper__in_doubt_operations",
         tool_input={}, tool_use_id="toolu_asking")
    out = _tools(store_dir, started).in_doubt_operations()
    [op] = out["in_doubt"]
    assert op["operation_id"] == "toolu_cut" and op["args"] == {"command": "make deploy"}
    assert len(op["args_digest"]) == 64
    assert "`make deploy` may have run in part or in full" in op["check"]
    assert out["summary"][0].startswith("tool call toolu_cut (Bash) started at seq")


def test_file_history_says_when_someone_else_changed_the_file(started: Path,
                                                             store_dir: Path) -> None:
    """`started`; the agent edits payment.py through a shell call, then the user edits it."""
    _bash(started, store_dir, "echo agent >> payment.py", "toolu_a")
    tools = _tools(store_dir, started)
    clean = tools.file_history("payment.py")
    assert clean["disk"] == "as the session last recorded it"
    assert [v["author"] for v in clean["versions_newest_first"]] == ["agent"]
    (started / "payment.py").write_text("user\n")
    changed = tools.file_history(str(started / "payment.py"))
    assert changed["disk"] == "changed outside the session since its latest version"
    assert "re-read it before editing" in changed["summary"][0]
    assert tools.file_history("README.md")["summary"] == [
        "the session never recorded a change of README.md"]


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.txt", "", ".", "sub/../../x"])
def test_a_path_outside_the_workspace_is_a_tool_input_error(started: Path, store_dir: Path,
                                                            path: str) -> None:
    """`started`; paths that leave the workspace (or name none)."""
    tools = _tools(store_dir, started)
    with pytest.raises(ToolInputInvalid):
        tools.file_history(path)
    with pytest.raises(ToolInputInvalid):
        tools.diff(path)


def test_diff_shows_the_agents_change_with_its_author(started: Path, store_dir: Path) -> None:
    """`started`; the agent appends a line to payment.py."""
    _bash(started, store_dir, "echo '# agent' >> payment.py", "toolu_d")
    out = _tools(store_dir, started).diff("payment.py")
    assert "+# agent" in out["diff"] and "agent" in out["summary"][0]
    with pytest.raises(ToolInputInvalid, match="beyond"):
        _tools(store_dir, started).diff("payment.py", to_seq=999)


def test_rewind_is_refused_unless_the_user_allows_it_and_the_preview_changes_nothing(
        started: Path, store_dir: Path) -> None:
    """`started`; the agent edits payment.py; no policy set (the default: off)."""
    _bash(started, store_dir, "echo bad >> payment.py", "toolu_r")
    before = _tree(store_dir), (started / "payment.py").read_bytes()
    tools = _tools(store_dir, started)
    preview = tools.rewind_preview(path="payment.py")
    assert [s["action"] for s in preview["steps"]] == ["restore"]
    assert preview["rewind_allowed"] is False and preview["dry_run"] is True
    with pytest.raises(ToolNotAllowed, match="sessionkeeper.mcpRewind allow"):
        tools.rewind(path="payment.py")
    assert (_tree(store_dir), (started / "payment.py").read_bytes()) == before


def test_an_allowed_rewind_restores_the_agents_change_refuses_the_users_and_undoes(
        started: Path, store_dir: Path) -> None:
    """`started`; the agent edits payment.py and test_payment.py, the user then edits
    test_payment.py; the policy allows rewind (git config in the repository)."""
    original = (started / "payment.py").read_text()
    _bash(started, store_dir, "echo bad >> payment.py && echo bad >> test_payment.py", "toolu_w")
    (started / "test_payment.py").write_text("the user's\n")
    git(started, "config", "sessionkeeper.mcpRewind", "allow")
    tools = _tools(store_dir, started)
    tools.rewind_preview(path="payment.py")  # the server's read-only Keeper has read it
    gc.collect()  # what the hooks run in this process left, freed; no collection from here on
    gc.disable()
    try:
        held = open_files(store_dir)
        done = tools.rewind(to_seq=0)
        assert open_files(store_dir) == held  # the Keeper made for the rewind closed after it
    finally:
        gc.enable()
    steps = {s["path"]: s for s in done["steps"]}
    assert steps["payment.py"]["outcome"] == "written"
    assert steps["test_payment.py"]["action"] == "refused"
    assert (started / "payment.py").read_text() == original
    assert (started / "test_payment.py").read_text() == "the user's\n"
    assert done["complete"] is False and "undo it with rewind(undo=true)" in done["summary"]
    undone = tools.rewind(undo=True)
    assert undone["undo_of"] == done["rewind_seq"]
    assert (started / "payment.py").read_text().endswith("bad\n")


def test_todos_are_the_list_the_agent_last_wrote(started: Path, store_dir: Path) -> None:
    """`started`; a TodoWrite call through the hooks."""
    todos = {"todos": [{"content": "reproduce", "status": "completed"},
                       {"content": "fix rounding", "status": "in_progress"}]}
    for event in ("PreToolUse", "PostToolUse"):
        call("claude", event, started, store_dir, tool_name="TodoWrite", tool_input=todos,
             tool_use_id="toolu_t", tool_response={})
    out = _tools(store_dir, started).todos()
    assert (out["done"], out["total"]) == (1, 2)
    assert out["summary"][1] == "open: fix rounding (in_progress)"


def test_the_verifier_of_a_native_thread_is_stale_after_a_file_changed(repo: Path,
                                                                       store_dir: Path) -> None:
    """`repo`; a native session records a test run, then the agent changes a file."""
    session = Keeper(store_dir).start(repo)
    session.record({"type": "verifier", "passed": 7, "total": 9, "command": "pytest"})
    (repo / "payment.py").write_text("changed\n")
    session.record_file("payment.py")
    session.close()
    out = _tools(store_dir, repo, agent=None, session=None).verifier()
    assert out["session"]["agent"] == "native"
    assert out["tests"]["passed"] == 7 and out["stale"] is True
    assert "payment.py changed after the test run" in out["stale_reasons"][0]


def test_every_read_tool_writes_nothing_to_the_store_nor_the_workspace(started: Path,
                                                                      store_dir: Path) -> None:
    """`started`; one shell call; every read-only tool called, some with bad input."""
    _bash(started, store_dir, "echo x >> payment.py", "toolu_x")
    before = _tree(store_dir), _tree(started)
    tools = _tools(store_dir, started)
    for name, args in [("drift_since", {}), ("drift_since", {"since": 0}),
                       ("in_doubt_operations", {}), ("file_history", {"path": "payment.py"}),
                       ("diff", {"path": "payment.py"}), ("rewind_preview", {"to_seq": 0}),
                       ("todos", {}), ("verifier", {}), ("rewind", {"to_seq": 0}),
                       ("file_history", {"path": "/etc/passwd"})]:
        with contextlib.suppress(ToolInputInvalid, ToolNotAllowed):
            json.dumps(getattr(tools, name)(**args))
    assert (_tree(store_dir), _tree(started)) == before
