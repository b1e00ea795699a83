"""Every hook event × SessionStart source × resume verdict × policy, against real git repositories
and a real store: what is recorded in the journal and what the agent is answered (the tool calls:
test_agent_hooks_tools.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionkeeper.hooks import state
from sessionkeeper.hooks.telling import ACK_PROMPT
from sessionkeeper.recovery.subsystems.worktree import Worktree
from tests.conftest import git, init_repo
from tests.unit._hooks import SID, call, context, journal, records

AGENTS = ["claude", "codex"]

pytestmark = pytest.mark.usefixtures("no_user_policy")  # conftest.py: every test, no user policy


def _started(agent: str, repo: Path, store: Path) -> None:
    call(agent, "SessionStart", repo, store, source="startup")


def _drift(repo: Path) -> tuple[str, str]:
    """Commit, switch to a new branch with one more commit; returns (old HEAD, new HEAD)."""
    old = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "drifted")
    (repo / "payment.py").write_text("def charge(amount):\n    return round(amount, 2)\n")
    git(repo, "commit", "-qam", "round the charge")
    return old, git(repo, "rev-parse", "HEAD")


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("source", ["startup", "clear", "compact", "fork"])
def test_a_session_start_records_a_lifecycle_and_a_real_baseline(agent: str, source: str,
                                                                 repo: Path, store_dir: Path) -> None:
    """Fixture: `repo` (fix/payment); a SessionStart of each source, then a second one."""
    answer = call(agent, "SessionStart", repo, store_dir, source=source)
    assert answer.output is None and answer.outcome == "recorded"
    call(agent, "SessionStart", repo, store_dir, source=source)
    folded = journal(store_dir, agent)
    assert folded is not None
    recorded = folded.state.get(Worktree).recorded()
    assert recorded is not None
    assert (recorded.branch, recorded.head) == ("fix/payment", git(repo, "rev-parse", "HEAD"))
    lifecycle = [(r["source"]) for r in records(store_dir, agent) if r["type"] == "lifecycle"]
    assert lifecycle[0] == "startup" and lifecycle[-1] == source and len(lifecycle) == (
        2 if source == "startup" else 3)
    assert [r["type"] for r in records(store_dir, agent)].count("baseline") == 1  # the second start


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("policy", ["warn", "block-on-drift"])
@pytest.mark.parametrize("fast", [True, False])
def test_a_resume_in_place_is_ok_and_the_model_gets_the_verified_state(
        agent: str, policy: str, fast: bool, repo: Path, store_dir: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: `repo`; a start, a tool call left in doubt, a resume in place (digest or full check)."""
    monkeypatch.setenv("SESSIONKEEPER_HOOK_POLICY", policy)
    _started(agent, repo, store_dir)
    call(agent, "PreToolUse", repo, store_dir, tool_name="Bash", tool_input={"command": "make deploy"},
         tool_use_id="call_deploy1")
    if not fast:
        (store_dir / "hooks" / "digests" / f"{agent}-{SID}.json").unlink()
    answer = call(agent, "SessionStart", repo, store_dir, source="resume")
    assert answer.outcome == "ok"
    text = context(answer)
    assert "nothing changed since it last ran" in text and "fix/payment" in text
    assert "call_deploy1 (Bash) started but never finished" in text
    assert (answer.output or {}).get("continue") is not False
    assert state.gate_of(store_dir, agent, SID) is None


@pytest.mark.parametrize("agent", AGENTS)
def test_a_resume_after_a_branch_switch_tells_the_model_what_changed_and_goes_on(
        agent: str, repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; a start on fix/payment, then a new branch with a new commit (policy warn)."""
    _started(agent, repo, store_dir)
    old, new = _drift(repo)
    answer = call(agent, "SessionStart", repo, store_dir, source="resume")
    assert answer.outcome == "drift"
    text = context(answer)
    assert "branch: fix/payment → drifted" in text
    assert f"HEAD: {old[:10]} → {new[:10]}" in text and "round the charge" in text
    assert "stale" in text
    message = (answer.output or {})["systemMessage"]
    assert "changed workspace" in message and "fix/payment → drifted" in message
    folded = journal(store_dir, agent)
    assert folded is not None
    recorded = folded.state.get(Worktree).recorded()
    assert recorded is not None and (recorded.branch, recorded.head) == ("drifted", new)
    [resume] = [r for r in records(store_dir, agent) if r["type"] == "lifecycle"
                and r["source"] == "resume"]
    assert resume["decision"] == "continue"
    again = call(agent, "SessionStart", repo, store_dir, source="resume")  # from the new baseline
    assert again.outcome == "ok"


@pytest.mark.parametrize("agent", AGENTS)
def test_a_file_changed_outside_the_session_is_drift_naming_the_file(agent: str, repo: Path,
                                                                     store_dir: Path) -> None:
    """Fixture: `repo`; the agent writes payment.py (Edit), then someone else changes it."""
    _started(agent, repo, store_dir)
    call(agent, "PreToolUse", repo, store_dir, tool_name="Edit",
         tool_input={"file_path": str(repo / "payment.py")}, tool_use_id="toolu_edit1")
    (repo / "payment.py").write_text("def charge(amount):\n    return amount * 2\n")
    call(agent, "PostToolUse", repo, store_dir, tool_name="Edit",
         tool_input={"file_path": str(repo / "payment.py")}, tool_response={"ok": True},
         tool_use_id="toolu_edit1")
    (repo / "payment.py").write_text("def charge(amount):\n    return -1\n")
    answer = call(agent, "SessionStart", repo, store_dir, source="resume")
    assert answer.outcome == "drift"
    assert "file changed outside the session: payment.py" in context(answer)


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("policy", ["warn", "block-on-drift"])
def test_a_resume_in_another_repository_is_stopped(agent: str, policy: str, repo: Path,
                                                   store_dir: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: `repo`; a start there, a resume from an unrelated repository (any policy but off)."""
    monkeypatch.setenv("SESSIONKEEPER_HOOK_POLICY", policy)
    _started(agent, repo, store_dir)
    other = init_repo(tmp_path / "other", {"README": "other\n"})
    answer = call(agent, "SessionStart", other, store_dir, source="resume")
    out = answer.output or {}
    if agent == "codex":
        assert answer.outcome == "stopped" and out["continue"] is False
        assert "another repository" in out["stopReason"] and str(repo) in out["stopReason"]
        assert state.gate_of(store_dir, agent, SID) is None
    else:  # Claude ignores continue:false at SessionStart: its prompts are gated instead
        assert answer.outcome == "gated" and "continue" not in out
        assert "must not continue here" in context(answer)
        prompt = call(agent, "UserPromptSubmit", other, store_dir, prompt="go on")
        assert prompt.outcome == "blocked" and (prompt.output or {})["decision"] == "block"
        assert "another repository" in (prompt.output or {})["reason"]
        assert f"cd {repo} && claude --resume {SID}" in (prompt.output or {})["reason"]
    [stop] = [r for r in records(store_dir, agent) if r["type"] == "lifecycle" and r["source"] == "resume"]
    assert stop["decision"] == "cancel" and "blocked" in stop["reason"]


@pytest.mark.parametrize("agent", AGENTS)
def test_block_on_drift_stops_a_drifted_resume_like_a_block(agent: str, repo: Path, store_dir: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: `repo`; a start, a branch switch, a resume under block-on-drift."""
    monkeypatch.setenv("SESSIONKEEPER_HOOK_POLICY", "block-on-drift")
    _started(agent, repo, store_dir)
    _drift(repo)
    answer = call(agent, "SessionStart", repo, store_dir, source="resume")
    reason = (answer.output or {}).get("stopReason") or (answer.output or {}).get("systemMessage")
    assert "block-on-drift" in str(reason) and "fix/payment → drifted" in str(reason)
    assert answer.outcome == ("stopped" if agent == "codex" else "gated")


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("verdict", ["ok", "drift", "blocked"])
def test_policy_off_answers_nothing_and_records_nothing(agent: str, verdict: str, repo: Path,
                                                        store_dir: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: `repo`; a start, then (off) a resume that would be ok, drift or blocked, and tools."""
    _started(agent, repo, store_dir)
    before = records(store_dir, agent)
    where = repo
    if verdict == "drift":
        _drift(repo)
    elif verdict == "blocked":
        where = init_repo(tmp_path / "other", {"README": "other\n"})
    monkeypatch.setenv("SESSIONKEEPER_HOOK_POLICY", "off")
    for event, fields in (("SessionStart", {"source": "resume"}), ("UserPromptSubmit", {"prompt": "x"}),
                          ("PreToolUse", {"tool_name": "Bash", "tool_input": {}, "tool_use_id": "c1"})):
        answer = call(agent, event, where, store_dir, **fields)
        assert answer.output is None and answer.outcome == "off"
    assert records(store_dir, agent) == before


def test_the_policy_is_read_from_the_repository_git_config(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo` with `git config sessionkeeper.hookPolicy block-on-drift` (local)."""
    git(repo, "config", "sessionkeeper.hookPolicy", "block-on-drift")
    _started("codex", repo, store_dir)
    _drift(repo)
    assert call("codex", "SessionStart", repo, store_dir, source="resume").outcome == "stopped"
    git(repo, "config", "sessionkeeper.hookPolicy", "off")
    assert call("codex", "SessionStart", repo, store_dir, source="resume").outcome == "off"
    git(repo, "config", "sessionkeeper.hookPolicy", "blokc")  # a typo counts as warn, with a note
    answer = call("codex", "SessionStart", repo, store_dir, source="resume")
    assert answer.outcome == "drift"


def test_a_resume_its_digest_proves_ok_is_still_off_when_the_policy_is_off(
        repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; a start and a checked resume (it leaves the digest), then `off` in the
    repository's git config: the digest is read while git answers, and nothing comes of it."""
    _started("codex", repo, store_dir)
    assert call("codex", "SessionStart", repo, store_dir, source="resume").outcome == "ok"
    assert call("codex", "SessionStart", repo, store_dir, source="resume").outcome == "ok"
    before = records(store_dir, "codex")
    git(repo, "config", "sessionkeeper.hookPolicy", "off")
    answer = call("codex", "SessionStart", repo, store_dir, source="resume")
    assert answer.output is None and answer.outcome == "off"
    assert records(store_dir, "codex") == before


def test_a_gated_claude_session_is_acknowledged_by_its_prompt(repo: Path, store_dir: Path,
                                                             tmp_path: Path) -> None:
    """Fixture: `repo`; a Claude start, a resume from another repository, then the ack prompt."""
    _started("claude", repo, store_dir)
    other = init_repo(tmp_path / "other", {"README": "other\n"})
    call("claude", "SessionStart", other, store_dir, source="resume")
    acked = call("claude", "UserPromptSubmit", other, store_dir, prompt=f"  {ACK_PROMPT.upper()} ")
    assert acked.outcome == "blocked" and "acknowledged" in (acked.output or {})["reason"]
    assert call("claude", "UserPromptSubmit", other, store_dir, prompt="go on").output is None
    decisions = [r.get("decision") for r in records(store_dir, "claude") if r["type"] == "lifecycle"
                 and r["source"] == "resume"]
    assert decisions == ["cancel", "continue"]


@pytest.mark.parametrize("agent", AGENTS)
def test_hooks_ack_lets_the_next_stopped_resume_through_once(agent: str, repo: Path, store_dir: Path,
                                                             tmp_path: Path) -> None:
    """Fixture: `repo`; a start, `hooks ack`, two resumes from another repository."""
    _started(agent, repo, store_dir)
    other = init_repo(tmp_path / "other", {"README": "other\n"})
    state.acknowledge(store_dir, agent, SID)
    first = call(agent, "SessionStart", other, store_dir, source="resume")
    assert first.outcome == "blocked" and "another repository" in context(first)  # told, not stopped
    assert (first.output or {}).get("continue") is not False
    second = call(agent, "SessionStart", other, store_dir, source="resume")
    assert second.outcome == ("stopped" if agent == "codex" else "gated")  # once only



@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("fast", [True, False])
def test_an_acknowledgement_is_used_up_by_the_next_resume_even_when_it_is_ok(
        agent: str, fast: bool, repo: Path, store_dir: Path, tmp_path: Path) -> None:
    """Fixture: `repo`; a start, a resume from another repository (stopped), `hooks ack`, a
    resume back in `repo` (ok: digest or full check), then another from the other repository."""
    _started(agent, repo, store_dir)
    other = init_repo(tmp_path / "other", {"README": "other\n"})
    call(agent, "SessionStart", other, store_dir, source="resume")
    state.acknowledge(store_dir, agent, SID)
    if not fast:
        (store_dir / "hooks" / "digests" / f"{agent}-{SID}.json").unlink(missing_ok=True)
    assert call(agent, "SessionStart", repo, store_dir, source="resume").outcome == "ok"
    again = call(agent, "SessionStart", other, store_dir, source="resume")
    assert again.outcome == ("stopped" if agent == "codex" else "gated")


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize(("event", "fields", "source"), [
    ("PreCompact", {"trigger": "auto"}, "compact"),
    ("PostCompact", {"trigger": "manual"}, "compact"),
    ("SessionEnd", {"reason": "logout"}, "shutdown"),
])
def test_compaction_and_session_end_are_lifecycle_records(agent: str, event: str, fields: dict[str, str],
                                                          source: str, repo: Path,
                                                          store_dir: Path) -> None:
    """Fixture: `repo`; a start, then the event."""
    _started(agent, repo, store_dir)
    answer = call(agent, event, repo, store_dir, **fields)
    assert answer.output is None and answer.outcome == "recorded"
    last = [r for r in records(store_dir, agent) if r["type"] == "lifecycle"][-1]
    assert last["source"] == source and event in last["reason"]
    assert next(iter(fields.values())) in last["reason"]


def test_an_ok_resume_by_the_fast_check_is_recorded_by_the_next_writer(repo: Path,
                                                                       store_dir: Path) -> None:
    """Fixture: `repo`; a start, an ok resume (digest, nothing written), then a tool call."""
    _started("claude", repo, store_dir)
    before = records(store_dir, "claude")
    assert call("claude", "SessionStart", repo, store_dir, source="resume").outcome == "ok"
    assert records(store_dir, "claude") == before
    call("claude", "PreToolUse", repo, store_dir, tool_name="Bash", tool_input={}, tool_use_id="c1")
    lifecycle = [r for r in records(store_dir, "claude") if r["type"] == "lifecycle"]
    assert lifecycle[-1]["source"] == "resume" and "verified: ok" in lifecycle[-1]["reason"]


def test_a_resume_of_a_session_without_a_journal_records_its_first_baseline(repo: Path,
                                                                            store_dir: Path) -> None:
    """Fixture: `repo`; hooks installed after the session started: its first hook is a resume."""
    answer = call("codex", "SessionStart", repo, store_dir, source="resume")
    assert answer.outcome == "recorded" and "no earlier record" in context(answer)
    folded = journal(store_dir, "codex")
    assert folded is not None and folded.state.get(Worktree).recorded() is not None
