"""The background catch-up (`hooks.catch_up`) folds a session's spool after a burst of tool calls
and leaves a digest, so the next resume is proven ok at once; the thin hook honours the policy.
Real hook processes, real detached catch-up processes, real git."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from pathlib import Path

from sessionkeeper.hooks import catch_up
from sessionkeeper.store import spool
from tests.conftest import git
from tests.unit._hooks import SID, payload, run

AGENT = "claude"


def _hook(repo: Path, store: Path, event: str, **fields: object) -> str:
    env = {"SESSIONKEEPER_CATCH_UP": "1"}
    done = run(AGENT, event, json.dumps(payload(AGENT, event, repo, **fields)), store, env=env)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def test_after_a_burst_of_calls_the_spool_is_folded_and_the_resume_is_proven_at_once(
        repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`, `store_dir`; a start and five Edit calls through the thin hook with the
    catch-up on, then a wait for it (at most 60 s), then a resume in place."""
    _hook(repo, store_dir, "SessionStart", source="startup")
    for n in range(5):
        fields = {"tool_name": "Edit", "tool_use_id": f"toolu_{n}", "tool_response": {},
                  "tool_input": {"file_path": str(repo / "payment.py")}}
        _hook(repo, store_dir, "PreToolUse", **fields)
        (repo / "payment.py").write_text(f"def charge(amount):\n    return amount + {n}\n")
        _hook(repo, store_dir, "PostToolUse", **fields)
    root = str(store_dir / "journals" / AGENT)
    deadline = time.monotonic() + 60
    while (spool.pending(root, SID) or catch_up.running(root, SID)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not spool.pending(root, SID), "the catch-up did not fold the spool"
    assert (store_dir / "hooks" / "digests" / f"{AGENT}-{SID}.json").exists()
    out = _hook(repo, store_dir, "SessionStart", source="resume")
    assert "nothing changed since it last ran" in out  # the digest proved it: no full check


def test_a_catch_up_is_known_to_run_while_it_holds_its_session(store_dir: Path) -> None:
    """Fixture: `store_dir`; the catch-up's lock held by this test, then released."""
    root = store_dir / "journals" / AGENT
    (root / "spool").mkdir(parents=True)
    assert not catch_up.running(str(root), SID)
    fd = os.open(root / "spool" / f"{SID}.catch-up", os.O_RDONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert catch_up.running(str(root), SID)
        assert catch_up.run(str(store_dir), AGENT, SID) == 0  # a second one leaves at once
    finally:
        os.close(fd)
    assert not catch_up.running(str(root), SID)


def test_the_thin_hook_records_nothing_when_the_policy_is_off(repo: Path, store_dir: Path) -> None:
    """Fixture: `repo` with `sessionkeeper.hookPolicy off` in its git config (after the start)."""
    _hook(repo, store_dir, "SessionStart", source="startup")
    git(repo, "config", "sessionkeeper.hookPolicy", "off")
    fields = {"tool_name": "Edit", "tool_use_id": "toolu_off",
              "tool_input": {"file_path": str(repo / "payment.py")}}
    _hook(repo, store_dir, "PreToolUse", **fields)
    root = str(store_dir / "journals" / AGENT)
    assert spool.read(spool.spool_path(root, SID)).calls == []
    key = hashlib.sha256((repo / "payment.py").read_bytes()).hexdigest()
    assert not (store_dir / "journals" / AGENT / "blobs" / key[:2] / key[2:]).exists()
    git(repo, "config", "sessionkeeper.hookPolicy", "warn")
    _hook(repo, store_dir, "PreToolUse", **fields)  # the same call, now kept: content and all
    assert [c["call"] for _e, c in spool.read(spool.spool_path(root, SID)).calls] == ["toolu_off"]
    assert (store_dir / "journals" / AGENT / "blobs" / key[:2] / key[2:]).exists()
