"""Tool-call hook events of both agents, against real git repositories and a real store: the
operations and file versions recorded in the journal, diffed and rewound, valid by the schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.unit._hooks import SID, call, context, journal, records

AGENTS = ["claude", "codex"]

pytestmark = pytest.mark.usefixtures("no_user_policy")


def _started(agent: str, repo: Path, store: Path) -> None:
    call(agent, "SessionStart", repo, store, source="startup")


@pytest.mark.parametrize("agent", AGENTS)
def test_tool_calls_are_operations_with_the_agents_ids_and_their_files_are_versions(
        agent: str, repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; a shell call that creates a file, a Write, a TodoWrite."""
    _started(agent, repo, store_dir)
    call(agent, "PreToolUse", repo, store_dir, tool_name="Bash",
         tool_input={"command": "echo hi > a.txt"}, tool_use_id="call_sh1")
    (repo / "a.txt").write_text("hi\n")
    call(agent, "PostToolUse", repo, store_dir, tool_name="Bash",
         tool_input={"command": "echo hi > a.txt"}, tool_response="", tool_use_id="call_sh1")
    call(agent, "PreToolUse", repo, store_dir, tool_name="Write",
         tool_input={"file_path": str(repo / "notes.md"), "content": "x"}, tool_use_id="toolu_w1")
    (repo / "notes.md").write_text("x")
    call(agent, "PostToolUse", repo, store_dir, tool_name="Write",
         tool_input={"file_path": str(repo / "notes.md"), "content": "x"},
         tool_response={"type": "create"}, tool_use_id="toolu_w1")
    call(agent, "PostToolUse", repo, store_dir, tool_name="TodoWrite", tool_use_id="toolu_t1",
         tool_input={"todos": [{"content": "round", "status": "completed"},
                               {"content": "test", "status": "pending"}]})
    folded = journal(store_dir, agent)
    assert folded is not None
    ops = folded.state.summaries()["operations"]
    assert (ops["committed"], ops["in_doubt"]) == (3, 0)
    started = [r for r in records(store_dir, agent) if r["type"] == "operation"]
    assert [(r["operation_id"], r["status"]) for r in started][:2] == [("call_sh1", "started"),
                                                                      ("call_sh1", "committed")]
    assert started[0]["args"] == {"command": "echo hi > a.txt"} and len(started[0]["args_digest"]) == 64
    changes = {r["path"]: r for r in records(store_dir, agent) if r["type"] == "file_change"}
    assert changes["a.txt"]["change"] == "create" and changes["a.txt"]["content"] == "stored"
    assert changes["notes.md"]["author"] == "agent" and changes["notes.md"]["content"] == "stored"
    assert folded.state.summaries()["todos"]["done"] == 1


@pytest.mark.parametrize("agent", AGENTS)
def test_an_edit_keeps_the_content_the_file_had_before_the_call(agent: str, repo: Path,
                                                                store_dir: Path) -> None:
    """Fixture: `repo`; payment.py changed by the user after the start, then an Edit of it."""
    _started(agent, repo, store_dir)
    (repo / "payment.py").write_text("def charge(amount):\n    return amount  # user\n")
    call(agent, "PreToolUse", repo, store_dir, tool_name="Edit",
         tool_input={"file_path": str(repo / "payment.py")}, tool_use_id="toolu_e1")
    (repo / "payment.py").write_text("def charge(amount):\n    return round(amount)\n")
    call(agent, "PostToolUse", repo, store_dir, tool_name="Edit",
         tool_input={"file_path": str(repo / "payment.py")}, tool_response={}, tool_use_id="toolu_e1")
    kinds = [(r["path"], r.get("change"), r["author"]) for r in records(store_dir, agent)
             if r["type"] == "file_change"]
    assert kinds == [("payment.py", "seen", "external"), ("payment.py", "modify", "agent")]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_commit_by_the_agent_moves_the_baseline_so_it_is_no_drift(agent: str, repo: Path,
                                                                     store_dir: Path) -> None:
    """Fixture: `repo`; a shell call that commits, then a resume in place."""
    _started(agent, repo, store_dir)
    call(agent, "PreToolUse", repo, store_dir, tool_name="Bash", tool_input={"command": "git commit"},
         tool_use_id="call_c1")
    (repo / "payment.py").write_text("def charge(amount):\n    return round(amount)\n")
    git(repo, "commit", "-qam", "agent commit")
    call(agent, "PostToolUse", repo, store_dir, tool_name="Bash", tool_input={"command": "git commit"},
         tool_response="", tool_use_id="call_c1")
    assert call(agent, "SessionStart", repo, store_dir, source="resume").outcome == "ok"


def test_a_failed_claude_tool_call_is_a_failed_operation_never_in_doubt(repo: Path,
                                                                       store_dir: Path) -> None:
    """Fixture: `repo`; a Bash call that exits 3 (Claude reports it in PostToolUseFailure)."""
    _started("claude", repo, store_dir)
    call("claude", "PreToolUse", repo, store_dir, tool_name="Bash",
         tool_input={"command": "echo oops > err.txt && exit 3"}, tool_use_id="toolu_f1")
    (repo / "err.txt").write_text("oops\n")
    answer = call("claude", "PostToolUseFailure", repo, store_dir, tool_name="Bash",
                  tool_input={"command": "echo oops > err.txt && exit 3"}, tool_use_id="toolu_f1",
                  error="Exit code 3\noops", is_interrupt=False)
    assert answer.outcome == "recorded"
    [done] = [r for r in records(store_dir, "claude") if r["type"] == "operation"
              and r["status"] != "started"]
    assert (done["status"], done["result"]) == ("failed", {"error": "Exit code 3\noops"})
    assert [r["path"] for r in records(store_dir, "claude") if r["type"] == "file_change"] == ["err.txt"]
    resumed = call("claude", "SessionStart", repo, store_dir, source="resume")
    assert resumed.outcome == "ok" and "never finished" not in context(resumed)


@pytest.mark.parametrize("agent", AGENTS)
def test_files_the_hooks_recorded_can_be_diffed_and_rewound(agent: str, repo: Path,
                                                            store_dir: Path) -> None:
    """Fixture: `repo`; two Edit calls of payment.py recorded by the hooks, then a rewind of the
    journal thread to before the second one."""
    from sessionkeeper.api import Keeper

    _started(agent, repo, store_dir)
    texts = ["def charge(amount):\n    return round(amount)\n",
             "def charge(amount):\n    return round(amount, 2)\n"]
    for n, text in enumerate(texts):
        edit = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / "payment.py")},
                "tool_use_id": f"toolu_e{n}", "tool_response": {}}
        call(agent, "PreToolUse", repo, store_dir, **edit)
        (repo / "payment.py").write_text(text)
        call(agent, "PostToolUse", repo, store_dir, **edit)
    sub = Keeper(store_dir).journal_keeper(agent)
    first, _ = [r["seq"] for r in records(store_dir, agent)
                if r["type"] == "file_change" and r["author"] == "agent"]
    [diff] = sub.diff(SID, to_seq=first)
    assert "+    return round(amount)" in diff.text and "-    return amount" in diff.text
    report = sub.rewind(SID, to_seq=first)
    outcome = report.outcome("payment.py")
    assert outcome is not None and outcome.status == "written", outcome
    assert (repo / "payment.py").read_text() == texts[0]


@pytest.mark.parametrize("agent", AGENTS)
def test_every_record_the_tool_hooks_build_is_valid_against_the_schema(agent: str, repo: Path,
                                                                      store_dir: Path) -> None:
    """Fixture: `repo`; every kind of tool call the hooks record without pydantic (Session.
    record_built): an Edit of a file changed before it (its `seen` version), a Write, a shell
    call that changes files, commits and moves HEAD (a new baseline), a TodoWrite / update_plan,
    a failed call and a large result (kept as its digest). Each record is then validated."""
    from sessionkeeper.session.validate import validate_event

    _started(agent, repo, store_dir)
    (repo / "payment.py").write_text("def charge(amount):\n    return amount  # user\n")
    edit = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / "payment.py")},
            "tool_use_id": "toolu_e1", "tool_response": {"ok": True, "n": [1, 2.5, None]}}
    call(agent, "PreToolUse", repo, store_dir, **edit)
    (repo / "payment.py").write_text("def charge(amount):\n    return round(amount, 2)\n")
    call(agent, "PostToolUse", repo, store_dir, **edit)
    write = {"tool_name": "Write", "tool_input": {"file_path": str(repo / "notes.md")},
             "tool_use_id": "toolu_w1", "tool_response": "x" * 10_000}
    call(agent, "PreToolUse", repo, store_dir, **write)
    (repo / "notes.md").write_text("notes\n")
    call(agent, "PostToolUse", repo, store_dir, **write)
    shell = {"tool_name": "Bash", "tool_input": {"command": "git commit -am x"},
             "tool_use_id": "toolu_b1", "tool_response": ""}
    call(agent, "PreToolUse", repo, store_dir, **shell)
    (repo / "test_payment.py").write_text("def test(): pass\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "by the agent")
    call(agent, "PostToolUse", repo, store_dir, **shell)
    plan = ({"todos": [{"content": "round", "status": "completed", "id": "a"},
                       {"content": "test", "status": "in_progress"}]} if agent == "claude"
            else {"plan": [{"step": "round", "status": "completed"}]})
    call(agent, "PostToolUse", repo, store_dir, tool_use_id="toolu_t1",
         tool_name="TodoWrite" if agent == "claude" else "update_plan", tool_input=plan)
    if agent == "claude":
        failing = {"tool_name": "Bash", "tool_input": {"command": "exit 3"},
                   "tool_use_id": "toolu_f1"}
        call(agent, "PreToolUse", repo, store_dir, **failing)
        call(agent, "PostToolUseFailure", repo, store_dir, **failing, error="Exit code 3")
    written = records(store_dir, agent)
    kinds = {r["type"] for r in written}
    assert {"operation", "file_change", "todo", "baseline"} <= kinds, kinds
    changes = {(r["path"], r.get("change")) for r in written if r["type"] == "file_change"}
    assert ("payment.py", "seen") in changes and ("notes.md", "create") in changes
    for record in written:
        validate_event({k: v for k, v in record.items() if k not in ("seq", "ts", "crc")})
