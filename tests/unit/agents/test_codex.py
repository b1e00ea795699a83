"""Codex CLI rollouts → our records and state: every fixture under fixtures/agents/codex/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionkeeper import agents
from sessionkeeper.agents.base import roots_from_env
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
    history,
    meta_of,
    read,
    replayed,
    root,
    summaries,
    validate,
    worktree,
)

THREAD = "019a7c00-1111-7222-8333-444455556666"
SCENARIOS = ["intact", "torn_tail", "middle_damage", "unknown_types", "compaction",
             "tool_call_without_result", "moved_repo", "zst", "archived"]


def test_intact_rollout_maps_ids_title_cwd_git_and_client() -> None:
    """fixtures/agents/codex/intact: the thread id is Codex's own; git is the creation-time block."""
    meta = read("codex", "intact").meta
    assert meta is not None
    assert meta["thread_id"] == THREAD
    assert meta["session_id"] != THREAD and len(meta["session_id"]) == 36
    assert meta["session_id"] == meta_of(read("codex", "intact"))["session_id"]  # stable across reads
    assert meta["title"] == "Fix payment rounding"  # thread_name_updated beats the first prompt
    assert meta["cwd"] == "/work/repo-a"
    assert meta["baseline"]["branch"] == "fix/payment" and meta["baseline"]["head"] == "1" * 40
    assert meta["baseline"]["identity"]["remote_url"] == "https://example.invalid/org/repo-a.git"
    assert meta["client"] == {"name": "codex", "version": "0.171.0"}
    assert meta["data"]["facts"]["git"] == {"source": "codex session_meta.git (creation time only)",
                                            "as_of": "2026-11-28T09:30:00.000Z"}
    assert meta["data"]["facts"]["cwd"]["as_of"] == "2026-11-28T09:30:01.000Z"
    assert isinstance(validate_event(meta), SessionMeta)


def test_intact_rollout_replays_plan_ledger_cost_model_permissions_and_edits() -> None:
    """fixtures/agents/codex/intact folded by replay(): every subsystem gets what the log says."""
    s = summaries(replayed("codex", "intact"))
    assert [(i["text"], i["status"]) for i in s["todos"]["items"]] == [
        ("reproduce", "done"), ("fix rounding", "in_progress"), ("add test", "pending")]
    assert s["operations"]["committed"] == 3 and s["operations"]["in_doubt"] == 0
    assert s["cost"]["total"] == {"calls": 2, "input_tokens": 2700, "output_tokens": 140, "usd": 0.0}
    assert s["model"]["name"] == "gpt-5-codex" and s["model"]["overrides"] == {"effort": "medium"}
    assert s["permissions"] == {"approval_mode": "on-request", "sandbox_policy": "workspace-write",
                                "tool_profile": "unknown"}
    assert s["worktree"]["baseline"]["branch"] == "fix/payment"
    assert s["attribution"]["agent"] == ["payment.py"]
    assert s["context"] == {"compacted_through_seq": None, "messages": 2}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_record_is_valid_in_our_vocabulary_with_contiguous_seq(scenario: str) -> None:
    """Every codex fixture: each record validates as an event and seq runs 1..n."""
    assert_valid_records("codex", scenario)


def test_torn_tail_is_reported_and_the_complete_prefix_used() -> None:
    """fixtures/agents/codex/torn_tail: the 41 torn bytes are the tail; all 21 lines are folded."""
    result = read("codex", "torn_tail")
    assert result.tail is not None and (result.tail.line, result.tail.length) == (22, 41)
    assert result.summary.torn_tail and result.summary.lines == 21
    rollout = result.rollout()
    assert rollout.status is Status.OK and rollout.tail is not None
    assert rollout.records == read("codex", "intact").records


def test_middle_damage_is_reported_with_its_line_and_makes_the_rollout_damaged() -> None:
    """fixtures/agents/codex/middle_damage: line 7 is damage; the lines after it still count."""
    result = read("codex", "middle_damage")
    assert [(d.line, d.kind) for d in result.damage] == [(7, "unparsable")]
    assert result.summary.status == "damaged"
    thread = replay([result.rollout()])
    assert thread.damaged[0]["line"] == 7
    assert summaries(thread)["cost"]["total"]["calls"] == 2  # lines after the damage are folded


def test_unknown_line_types_are_skipped_and_counted() -> None:
    """fixtures/agents/codex/unknown_types: unknown kinds are counted; known ones are skipped."""
    result = read("codex", "unknown_types")
    data = meta_of(result)["data"]
    assert data["unrecognized"] == {"future_record_kind": 1, "response_item:quantum_tool_call": 1,
                                    "(no type)": 1}
    assert data["skipped"]["world_state"] == 1 and data["skipped"]["event_msg:hologram_projected"] == 1
    assert result.summary.status == "ok" and not result.damage
    assert result.records == read("codex", "intact").records


def test_compaction_restores_the_summary_and_only_the_messages_after_it() -> None:
    """fixtures/agents/codex/compaction: the context is the summary plus the new user message."""
    thread = replayed("codex", "compaction")
    conversation = context(thread).conversation()
    assert conversation[0]["summary"] and conversation[0]["text"].startswith("Summary: rounding fixed")
    assert [m["text"] for m in conversation[1:]] == ["Now add the test"]


def test_tool_call_without_result_is_in_doubt() -> None:
    """fixtures/agents/codex/tool_call_without_result: `make deploy` started, never committed."""
    s = summaries(replayed("codex", "tool_call_without_result"))
    assert [(o["operation_id"], o["tool"]) for o in s["operations"]["in_doubt_operations"]] == [
        ("call_deploy", "exec_command")]
    assert read("codex", "tool_call_without_result").summary.in_doubt == 1


def test_moved_repo_is_blocked_with_the_cwd_missing(tmp_path: Path) -> None:
    """fixtures/agents/codex/moved_repo: the recorded cwd is gone, so the verdict is blocked."""
    thread = replayed("codex", "moved_repo")
    differences, verdict = validate(thread, tmp_path / "nowhere")
    assert verdict == "blocked" and differences[0].kind == "cwd_missing"
    assert worktree(thread).state["cwd"] == "/nonexistent/sessionkeeper-fixture/repo-a"


def test_zst_rollout_is_decoded_like_the_plain_one() -> None:
    """fixtures/agents/codex/zst: the compressed rollout yields the intact records."""
    result = read("codex", "zst")
    assert result.file.compressed
    assert result.records == read("codex", "intact").records
    assert meta_of(result)["thread_id"] == THREAD


def test_discovery_prefers_the_active_plain_rollout_over_archived_and_compressed_copies() -> None:
    """fixtures/agents/codex/archived: one file per name; an archived-only thread is still found."""
    found = files("codex", root("codex", "archived"))
    names = [(f.path.relative_to(root("codex", "archived")).as_posix(), f.archived) for f in found]
    assert names == [
        ("archived_sessions/rollout-2026-11-27T08-00-00-019a7c00-9999-7222-8333-444455556666.jsonl", True),
        (f"sessions/2026/11/28/rollout-2026-11-28T09-30-00-{THREAD}.jsonl", False)]


def test_codex_home_is_a_comma_list_and_defaults_to_dot_codex(tmp_path: Path) -> None:
    """No fixture: $CODEX_HOME with two roots, and the default when it is unset."""
    env = {"CODEX_HOME": f"{tmp_path}/a, {tmp_path}/b", "HOME": str(tmp_path)}
    assert agents.get("codex").default_roots(env) == [tmp_path / "a", tmp_path / "b"]
    assert roots_from_env("CODEX_HOME", ["~/.codex"], {})[0].name == ".codex"
    assert list(agents.get("codex").discover([tmp_path / "missing"])) == []


def _rollout_in(repo: Path, tmp: Path) -> Path:
    """A Codex home whose thread was created in `repo` at its current HEAD (lines from the generator)."""
    gen = generator()
    lines = gen.codex_lines(str(repo))
    lines[0]["payload"]["git"] = {"commit_hash": git(repo, "rev-parse", "HEAD"),
                                  "branch": git(repo, "branch", "--show-current")}
    path = tmp / "codexhome/sessions/2026/11/28" / gen.CODEX_NAME
    path.parent.mkdir(parents=True)
    path.write_bytes(gen.dump(lines))
    return tmp / "codexhome"


def test_resume_check_in_place_is_ok_despite_edits_the_log_has_no_hash_for(tmp_path: Path) -> None:
    """A real git repo on fix/payment whose payment.py the thread patched: no false drift."""
    repo = init_repo(tmp_path / "repo-a", {"payment.py": "def charge(a):\n    return round(a, 2)\n"})
    git(repo, "checkout", "-q", "-b", "fix/payment")
    home = _rollout_in(repo, tmp_path)
    thread = replay([agents.get("codex").load(next(iter(files("codex", home))))])
    assert (history(thread).last("payment.py") or {}).get("unknown") is True
    differences, verdict = validate(thread, repo)
    assert (differences, verdict) == ([], "ok")


def test_resume_check_on_another_branch_is_drift_with_the_branch(tmp_path: Path) -> None:
    """The same thread after `git checkout -b other` in the real repo: drift, branch differs."""
    repo = init_repo(tmp_path / "repo-a", {"payment.py": "x = 1\n"})
    git(repo, "checkout", "-q", "-b", "fix/payment")
    home = _rollout_in(repo, tmp_path)
    git(repo, "checkout", "-q", "-b", "other")
    thread = replay([agents.get("codex").load(next(iter(files("codex", home))))])
    differences, verdict = validate(thread, repo)
    assert verdict == "drift"
    assert [(d.kind, d.recorded, d.current) for d in differences] == [("branch", "fix/payment", "other")]


def test_a_rollout_of_the_bare_era_is_a_thread_with_its_cwd_title_ledger_and_git(
        tmp_path: Path) -> None:
    """A rollout as Codex wrote them before ~Sept 2025 (no {timestamp, type, payload} envelope):
    the SessionMeta itself as line 1 (id, timestamp, instructions, git; no cwd), a
    `{"record_type":"state"}` line, bare ResponseItems (the <environment_context> message giving
    the cwd, a prompt, a shell call and its output, a reply), in a real git repo."""
    repo = init_repo(tmp_path / "repo-a", {"payment.py": "x = 1\n"})
    head = git(repo, "rev-parse", "HEAD").strip()
    context = f"<environment_context>\n  <cwd>{repo}</cwd>\n</environment_context>"
    lines = [
        {"id": THREAD, "timestamp": "2025-08-20T09:30:00.000Z", "instructions": None,
         "git": {"commit_hash": head, "branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "id": None, "role": "user",
         "content": [{"type": "input_text", "text": context}]},
        {"type": "message", "id": None, "role": "user",
         "content": [{"type": "input_text", "text": "Fix the rounding"}]},
        {"type": "function_call", "id": "fc_1", "name": "shell", "call_id": "call_1",
         "arguments": json.dumps({"command": ["pytest", "-q"]})},
        {"type": "function_call_output", "call_id": "call_1", "output": "7 passed"},
        {"record_type": "state"},
        {"type": "message", "id": "msg_1", "role": "assistant",
         "content": [{"type": "output_text", "text": "Done."}]},
    ]
    path = tmp_path / f"codexhome/sessions/2025/08/20/rollout-2025-08-20T09-30-00-{THREAD}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    found = agents.get("codex").read(next(iter(files("codex", tmp_path / "codexhome"))))
    s = found.summary
    assert (s.status, s.thread_id, s.cwd, s.title, s.branch, s.head) == (
        "ok", THREAD, str(repo), "Fix the rounding", "main", head)
    assert (s.messages, s.operations, s.in_doubt, s.unrecognized) == (2, 1, 0, 0)
    thread = replay([found.rollout()])
    assert validate(thread, repo) == ([], "ok")


def test_a_fork_names_its_parent_thread_and_inherited_headers_are_skipped(tmp_path: Path) -> None:
    """A generated fork: forked_from_id, then the parent's header replayed inside the fork's file."""
    gen = generator()
    parent = gen.codex_lines()
    fork_id = "019a7c00-2222-7222-8333-444455556666"
    head = json.loads(json.dumps(parent[0]))
    head["payload"].update(id=fork_id, session_id=fork_id, forked_from_id=gen.CODEX_THREAD)
    path = tmp_path / f"sessions/2026/11/29/rollout-2026-11-29T10-00-00-{fork_id}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(gen.dump([head, *parent]))
    meta = meta_of(agents.get("codex").read(next(iter(files("codex", tmp_path)))))
    assert meta["thread_id"] == fork_id
    assert meta["data"]["agent"]["forked_from"] == {"thread_id": gen.CODEX_THREAD}
    assert meta["data"]["skipped"]["session_meta:inherited"] == 1


def test_resume_command_is_codex_resume_with_the_thread_id() -> None:
    """No fixture: the agent's own resume command."""
    assert agents.get("codex").resume_command(THREAD) == ["codex", "resume", THREAD]


# scenario: (todos done/total, in-doubt ids, model calls, input tokens, output tokens)
EXPECTED = {
    "intact": ((1, 3), [], 2, 2700, 140),
    "torn_tail": ((1, 3), [], 2, 2700, 140),
    "middle_damage": ((0, 0), [], 2, 2700, 140),  # the update_plan line is the damaged one
    "unknown_types": ((1, 3), [], 2, 2700, 140),
    "compaction": ((1, 3), [], 1, 1200, 80),
    "tool_call_without_result": ((1, 3), ["call_deploy"], 2, 2700, 140),
    "moved_repo": ((1, 3), [], 2, 2700, 140),
    "zst": ((1, 3), [], 2, 2700, 140),
}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_replay_restores_todos_doubt_cost_model_permissions_and_branch(scenario: str) -> None:
    """Every codex fixture folded by replay(): the state each subsystem reports."""
    (done, total), doubt, calls, tokens_in, tokens_out = EXPECTED[scenario]
    s = summaries(replayed("codex", scenario))
    assert (s["todos"]["done"], s["todos"]["total"]) == (done, total)
    assert [o["operation_id"] for o in s["operations"]["in_doubt_operations"]] == doubt
    assert s["cost"]["total"] == {"calls": calls, "input_tokens": tokens_in, "output_tokens": tokens_out,
                                  "usd": 0.0}
    assert s["model"]["name"] == "gpt-5-codex"
    assert s["permissions"]["approval_mode"] == "on-request"
    assert s["worktree"]["baseline"]["branch"] == "fix/payment"


def test_a_thread_created_in_an_unborn_repository_checked_in_place_is_ok(tmp_path: Path) -> None:
    """A real `git init` repository without commits, where Codex wrote an empty `git: {}`."""
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    gen = generator()
    lines = gen.codex_lines(str(repo))
    lines[0]["payload"]["git"] = {}
    path = tmp_path / "codexhome/sessions/2026/11/28" / gen.CODEX_NAME
    path.parent.mkdir(parents=True)
    path.write_bytes(gen.dump(lines))
    thread = replay([agents.get("codex").load(next(iter(files("codex", tmp_path / "codexhome"))))])
    assert validate(thread, repo) == ([], "ok")
