"""Claude Code transcripts → our records and state: every fixture under fixtures/agents/claude/."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionkeeper import agents
from sessionkeeper.recovery.replay import replay
from sessionkeeper.schema import SessionMeta
from sessionkeeper.session.validate import validate_event
from sessionkeeper.store.reader import Status
from tests.conftest import git, init_repo
from tests.unit._agents import (
    assert_valid_records,
    context,
    files,
    generator,
    ledger,
    meta_of,
    only_session,
    read,
    replayed,
    root,
    summaries,
    validate,
    worktree,
)

SESSION = "5b1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e"
SCENARIOS = ["intact", "torn_tail", "middle_damage", "unknown_types", "compaction", "rewind_branch",
             "tool_call_without_result", "moved_repo", "branch_change", "subagent", "legacy_todos"]


def test_intact_transcript_maps_ids_title_cwd_branch_mode_model_and_version() -> None:
    """fixtures/agents/claude/intact: the thread id is the sessionId; no HEAD is claimed."""
    meta = read("claude", "intact").meta
    assert meta is not None
    assert meta["thread_id"] == SESSION and meta["session_id"] != SESSION
    assert meta["title"] == "Fix payment rounding"  # ai-title beats the first prompt
    assert meta["cwd"] == "/work/repo-a"
    assert meta["baseline"] == {"repo_root": "/work/repo-a", "worktree": "/work/repo-a",
                                "identity": None, "branch": "fix/payment", "head": None}
    assert "head" in meta["data"]["unknown"]
    assert meta["permissions"]["approval_mode"] == "acceptEdits"
    assert meta["model"] == "claude-sonnet-5"
    assert meta["client"] == {"name": "claude", "version": "2.1.332"}
    assert meta["data"]["facts"]["git"]["source"] == "claude gitBranch of the latest line (no commit SHA)"
    assert isinstance(validate_event(meta), SessionMeta)


def test_intact_transcript_replays_todos_ledger_cost_and_edits() -> None:
    """fixtures/agents/claude/intact folded by replay(): todos, 3 committed/failed calls, $0.42."""
    s = summaries(replayed("claude", "intact"))
    assert [(i["text"], i["status"]) for i in s["todos"]["items"]] == [
        ("reproduce", "done"), ("fix rounding", "in_progress"), ("add test", "pending")]
    assert (s["operations"]["committed"], s["operations"]["failed"]) == (2, 1)  # pytest exited 1
    # msg_1 is written as two lines (two content blocks): its usage counts once
    assert s["cost"]["total"]["input_tokens"] == 4 * 1600 and s["cost"]["total"]["usd"] == 0.42
    assert s["model"]["name"] == "claude-sonnet-5"
    assert s["attribution"]["agent"] == ["payment.py"]
    assert s["context"]["messages"] == 3


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_record_is_valid_in_our_vocabulary_with_contiguous_seq(scenario: str) -> None:
    """Every claude fixture: each record validates as an event and seq runs 1..n."""
    assert_valid_records("claude", scenario)


def test_torn_tail_is_reported_not_a_blank_resume() -> None:
    """fixtures/agents/claude/torn_tail: the torn 57 bytes are the tail; the session is whole."""
    result = read("claude", "torn_tail")
    assert result.tail is not None and (result.tail.line, result.tail.length) == (16, 57)
    assert result.records == read("claude", "intact").records
    assert result.rollout().status is Status.OK


def test_middle_damage_is_reported_and_the_lines_after_it_stay_on_the_live_branch() -> None:
    """fixtures/agents/claude/middle_damage: line 7 is damage; its child still continues the chain."""
    result = read("claude", "middle_damage")
    assert [(d.line, d.kind) for d in result.damage] == [(7, "unparsable")]
    assert result.summary.rewound_lines == 0
    s = summaries(replay([result.rollout()]))
    assert s["context"]["messages"] == 3 and s["attribution"]["agent"] == ["payment.py"]


def test_unknown_line_types_are_skipped_and_counted_and_future_fields_ignored() -> None:
    """fixtures/agents/claude/unknown_types: nothing is damage; every odd line is counted."""
    result = read("claude", "unknown_types")
    data = meta_of(result)["data"]
    assert data["unrecognized"] == {"hologram": 1}
    assert data["skipped"]["attachment:future_reminder"] == 1
    assert data["skipped"]["sidechain"] == 1 and data["skipped"]["assistant:no message"] == 1
    assert not result.damage and result.summary.status == "ok"
    assert summaries(replay([result.rollout()]))["operations"]["total"] == 3


def test_compaction_restores_the_summary_and_only_the_messages_after_it() -> None:
    """fixtures/agents/claude/compaction: compact_boundary + isCompactSummary become one summary."""
    conversation = context(replayed("claude", "compaction")).conversation()
    assert conversation[0]["summary"] and "rounding fixed" in conversation[0]["text"]
    assert [m["text"] for m in conversation[1:]] == ["Now add the test", "Added test_rounding."]


def test_rewound_branch_is_counted_not_folded_but_its_cost_is_kept() -> None:
    """fixtures/agents/claude/rewind_branch: the abandoned branch's calls and todos are not restored."""
    result = read("claude", "rewind_branch")
    assert result.summary.rewound_lines == 6
    s = summaries(replay([result.rollout()]))
    entries = ledger(replay([result.rollout()])).ledger
    assert set(entries) == {"toolu_todo1", "toolu_bash1", "toolu_edit2"}
    assert [i["status"] for i in s["todos"]["items"]] == ["done", "in_progress", "pending"]
    assert [m["text"] for m in context(replay([result.rollout()])).conversation()][-2:] == [
        "Instead, fix the rounding in payment.py", "Fixed on the live branch."]
    assert s["cost"]["total"]["input_tokens"] == 8 * 1600  # money spent on both branches


def test_tool_call_without_result_is_in_doubt() -> None:
    """fixtures/agents/claude/tool_call_without_result: `make deploy` started, no tool_result."""
    s = summaries(replayed("claude", "tool_call_without_result"))
    assert [(o["operation_id"], o["tool"]) for o in s["operations"]["in_doubt_operations"]] == [
        ("toolu_deploy", "Bash")]


def test_moved_repo_is_blocked_with_the_cwd_missing(tmp_path: Path) -> None:
    """fixtures/agents/claude/moved_repo: the recorded cwd no longer exists."""
    differences, verdict = validate(replayed("claude", "moved_repo"), tmp_path / "gone")
    assert verdict == "blocked" and differences[0].kind == "cwd_missing"


def test_branch_of_the_latest_line_wins() -> None:
    """fixtures/agents/claude/branch_change: resumed on release/1.2, which is what is restored."""
    thread = replayed("claude", "branch_change")
    assert worktree(thread).state["baseline"]["branch"] == "release/1.2"
    assert read("claude", "branch_change").summary.branch == "release/1.2"


def test_subagent_transcript_belongs_to_its_parent_thread() -> None:
    """fixtures/agents/claude/subagent: the sub-agent file is linked, never a thread of its own."""
    found = files("claude", root("claude", "subagent"))
    assert [(f.kind, f.parent) for f in found] == [("session", None), ("subagent", SESSION)]
    sub = agents.get("claude").read(found[1])
    assert meta_of(sub)["thread_id"] == SESSION and sub.summary.parent_thread_id == SESSION
    parent_session = meta_of(agents.get("claude").read(found[0]))["session_id"]
    assert meta_of(sub)["session_id"] not in (SESSION, parent_session)
    assert meta_of(sub)["data"]["agent"]["subagent"]["meta"]["toolUseId"] == "toolu_task1"
    assert [r["tool"] for r in sub.records if r["type"] == "operation"] == ["Bash", "Bash"]


def test_legacy_todos_file_gives_the_todos_when_the_transcript_has_none() -> None:
    """fixtures/agents/claude/legacy_todos: todos/<session>-agent-<session>.json is a companion."""
    found = only_session("claude", root("claude", "legacy_todos"))
    assert [p.parent.name for p in found.companions] == ["todos"]
    items = summaries(replayed("claude", "legacy_todos"))["todos"]["items"]
    assert [(i["text"], i["status"]) for i in items] == [("design", "done"), ("implement", "pending")]


def test_a_session_id_that_is_not_a_uuid_makes_no_thread(tmp_path: Path) -> None:
    """A generated transcript whose file name and sessionId are not UUIDs: no_meta, not a crash."""
    gen = generator()
    lines = gen.claude_lines(gen.Transcript(session="not-a-uuid"))
    path = tmp_path / "projects/p/not-a-uuid.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(gen.dump(lines))
    result = agents.get("claude").read(next(iter(files("claude", tmp_path))))
    assert result.meta is None and result.summary.status == "no_meta"
    assert result.rollout().status is Status.NO_META


def test_claude_config_dir_is_a_comma_list_and_defaults_include_dot_config(tmp_path: Path) -> None:
    """No fixture: $CLAUDE_CONFIG_DIR with two roots; defaults ~/.claude and ~/.config/claude."""
    claude = agents.get("claude")
    assert claude.default_roots({"CLAUDE_CONFIG_DIR": f"{tmp_path}/x,{tmp_path}/y"}) == [
        tmp_path / "x", tmp_path / "y"]
    assert claude.default_roots({}) == [Path.home() / ".claude", Path.home() / ".config/claude"]


def _transcript_in(repo: Path, tmp: Path, branch: str) -> Path:
    gen = generator()
    path = tmp / "cfg/projects/-repo" / f"{gen.CLAUDE_SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(gen.dump(gen.claude_lines(gen.Transcript(cwd=str(repo), branch=branch))))
    return tmp / "cfg"


def test_resume_check_in_place_is_ok_although_no_head_was_recorded(tmp_path: Path) -> None:
    """A real git repo on fix/payment with commits: no false `head` or file drift."""
    repo = init_repo(tmp_path / "repo-a", {"payment.py": "def charge(a):\n    return round(a, 2)\n"})
    git(repo, "checkout", "-q", "-b", "fix/payment")
    cfg = _transcript_in(repo, tmp_path, "fix/payment")
    thread = replay([agents.get("claude").load(only_session("claude", cfg))])
    assert validate(thread, repo) == ([], "ok")


def test_resume_check_on_another_branch_is_drift_with_the_branch(tmp_path: Path) -> None:
    """The same transcript after `git checkout -b hotfix`: drift, the branch differs."""
    repo = init_repo(tmp_path / "repo-a", {"payment.py": "x\n"})
    git(repo, "checkout", "-q", "-b", "fix/payment")
    cfg = _transcript_in(repo, tmp_path, "fix/payment")
    git(repo, "checkout", "-q", "-b", "hotfix")
    differences, verdict = validate(replay([agents.get("claude").load(only_session("claude", cfg))]), repo)
    assert verdict == "drift"
    assert [(d.kind, d.recorded, d.current) for d in differences] == [("branch", "fix/payment", "hotfix")]


def test_a_session_on_a_detached_head_checked_in_place_is_ok_and_drift_once_on_a_branch(
        tmp_path: Path) -> None:
    """A real git repo with its HEAD detached and a transcript whose lines say gitBranch "HEAD"
    (what Claude Code 2.1.332 writes there); then `git checkout -q main`."""
    repo = init_repo(tmp_path / "repo-a", {"payment.py": "x\n"})
    git(repo, "checkout", "-q", "--detach")
    cfg = _transcript_in(repo, tmp_path, "HEAD")
    thread = replay([agents.get("claude").load(only_session("claude", cfg))])
    assert validate(thread, repo) == ([], "ok")
    git(repo, "checkout", "-q", "main")
    differences, verdict = validate(thread, repo)
    assert verdict == "drift"
    assert [(d.kind, d.recorded, d.current) for d in differences] == [("branch", None, "main")]


def test_resume_command_is_claude_resume_with_the_session_id() -> None:
    """No fixture: the agent's own resume command."""
    assert agents.get("claude").resume_command(SESSION) == ["claude", "--resume", SESSION]


# scenario: (todos done/total, in-doubt ids, cost records, input tokens, usd, branch)
EXPECTED = {
    "intact": ((1, 3), [], 5, 6400, 0.42, "fix/payment"),
    "torn_tail": ((1, 3), [], 5, 6400, 0.42, "fix/payment"),
    "middle_damage": ((1, 3), [], 4, 4800, 0.42, "fix/payment"),  # msg_2's line is the damaged one
    "unknown_types": ((1, 3), [], 5, 6400, 0.42, "fix/payment"),
    "compaction": ((1, 3), [], 5, 8000, 0.0, "fix/payment"),
    "rewind_branch": ((1, 3), [], 8, 12800, 0.0, "fix/payment"),
    "tool_call_without_result": ((1, 3), ["toolu_deploy"], 5, 8000, 0.0, "fix/payment"),
    "moved_repo": ((1, 3), [], 5, 6400, 0.42, "fix/payment"),
    "branch_change": ((1, 3), [], 6, 8000, 0.42, "release/1.2"),
    "subagent": ((1, 3), [], 5, 8000, 0.0, "fix/payment"),
    "legacy_todos": ((1, 2), [], 1, 1600, 0.0, "fix/payment"),
}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_replay_restores_todos_doubt_cost_model_permissions_and_branch(scenario: str) -> None:
    """Every claude fixture's session folded by replay(): the state each subsystem reports."""
    (done, total), doubt, calls, tokens_in, usd, branch = EXPECTED[scenario]
    s = summaries(replayed("claude", scenario))
    assert (s["todos"]["done"], s["todos"]["total"]) == (done, total)
    assert [o["operation_id"] for o in s["operations"]["in_doubt_operations"]] == doubt
    assert (s["cost"]["total"]["calls"], s["cost"]["total"]["input_tokens"]) == (calls, tokens_in)
    assert s["cost"]["total"]["usd"] == usd
    assert s["model"]["name"] == "claude-sonnet-5"
    assert s["permissions"]["approval_mode"] == "acceptEdits"
    assert s["worktree"]["baseline"]["branch"] == branch


def test_symlink_loops_beside_transcripts_never_hide_them(tmp_path: Path) -> None:
    """fixtures/agents/claude/subagent copied, with 40 self-referencing symlinks named like
    transcripts in its project folder and in the sub-agents folder (scandir lists them in any
    order, some before the real files)."""
    import os
    import shutil

    home = Path(shutil.copytree(root("claude", "subagent"), tmp_path / "claude"))
    [project] = list(home.glob("projects/*"))
    [subagents] = list(project.glob("*/subagents"))
    for folder, prefix in ((project, ""), (subagents, "agent-")):
        for n in range(40):
            os.symlink(f"{prefix}loop{n}.jsonl", folder / f"{prefix}loop{n}.jsonl")
    found = [(f.kind, f.path.name) for f in agents.get("claude").discover([home])]
    assert sorted(found) == [("session", f"{SESSION}.jsonl"),
                             ("subagent", "agent-a1b2c3d4e5f6.jsonl")]
    listed = agents.get("claude").changes([home], checkpoints={})
    assert sorted(f.path.name for f in listed.changed) == sorted(name for _, name in found)
