"""A tool hook on a journal whose recorded baseline is damaged or crafted (checksums valid, shapes
wrong): the call is recorded and answered without a traceback, and the damage is left for the
resume check (never papered over by a refreshed baseline), which stops the resume."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.store.codec import frame
from tests.conftest import git
from tests.unit._hooks import SID, call, payload, records, run

Damage = Callable[[Path], None]


def _appended(body: dict[str, object]) -> Damage:
    """Append a checksum-valid `baseline` record with `body` to the closed journal."""
    def damage(store: Path) -> None:
        session = Keeper(store).journal("claude", SID)
        path, seq = session.writer.path, session.writer.last_seq
        session.close()
        with open(path, "ab") as handle:
            handle.write(frame(seq + 1, b"2026-12-01T00:00:00.000Z",
                               orjson.dumps({"type": "baseline", **body})))
    return damage


def _snapshot_without_baseline(store: Path) -> None:
    """Write a snapshot (by the journal itself: every integrity check passes) whose worktree state
    lacks its `baseline` key."""
    session = Keeper(store).journal("claude", SID)
    del session.state["worktree"].state["baseline"]
    session.snapshot()
    session.writer.close()  # not Session.close: that would snapshot the state once more


def _snapshot_with_baseline(value: object) -> Damage:
    """Append a checksum-valid copy of the journal's last snapshot whose worktree baseline is
    `value` (a shape our own snapshot never has)."""
    def damage(store: Path) -> None:
        session = Keeper(store).journal("claude", SID)
        session.snapshot()
        path, seq = session.writer.path, session.writer.last_seq
        session.close()
        lines = Path(path).read_bytes().splitlines()
        last = next(orjson.loads(line) for line in reversed(lines) if b'"snapshot"' in line)
        body = {k: v for k, v in last.items() if k not in ("seq", "ts", "crc")}
        body["through_seq"] = seq
        body["state"]["subsystems"]["worktree"]["baseline"] = value
        with open(path, "ab") as handle:
            handle.write(frame(seq + 1, b"2026-12-01T00:00:00.000Z", orjson.dumps(body)))
    return damage


DAMAGES: dict[str, Damage] = {
    "a baseline whose head is a number": _appended({"branch": "fix/payment", "head": 5}),
    "a baseline whose identity has a foreign key": _appended(
        {"branch": "fix/payment", "identity": {"root_commits": [], "bogus": 1}}),
    "a snapshot whose worktree state has no baseline": _snapshot_without_baseline,
    "a snapshot whose worktree baseline is a list": _snapshot_with_baseline([1]),
    "a snapshot whose worktree baseline is a string": _snapshot_with_baseline("main"),
    "a snapshot whose worktree baseline has a number for head": _snapshot_with_baseline(
        {"branch": "fix/payment", "head": 5, "identity": {"root_commits": [], "bogus": [1]}}),
}


@pytest.mark.parametrize("name", list(DAMAGES))
def test_a_shell_call_on_a_damaged_baseline_is_recorded_and_the_resume_is_still_stopped(
        name: str, repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`; a Claude start, the journal's baseline damaged, then a shell call that
    commits (HEAD moves) through the real hook process, then a resume in place."""
    call("claude", "SessionStart", repo, store_dir, source="startup")
    DAMAGES[name](store_dir)
    (repo / "payment.py").write_text("def charge(amount):\n    return round(amount)\n")
    git(repo, "commit", "-qam", "agent commit")
    bash = {"tool_name": "Bash", "tool_input": {"command": "git commit -am x"},
            "tool_response": "", "tool_use_id": "call_c1"}
    done = run("claude", "PostToolUse", json.dumps(payload("claude", "PostToolUse", repo, **bash)),
               store_dir)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done.stderr
    after = records(store_dir, "claude")
    assert [r["status"] for r in after if r["type"] == "operation"] == ["committed"]
    assert after[-1]["type"] == "operation"  # no baseline refreshed over the damaged one
    resumed = run("claude", "SessionStart", json.dumps(payload("claude", "SessionStart", repo,
                                                               source="resume")), store_dir)
    assert resumed.returncode == 0 and "failed open" not in resumed.stderr, resumed.stderr
    text = json.loads(resumed.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "baseline_unreadable" in text and "must not continue here" in text
