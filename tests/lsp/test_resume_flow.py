"""End to end over stdio: start, record, check, drift after a branch switch, resume as a fork."""

from __future__ import annotations

from pathlib import Path

from ..conftest import git
from .conftest import sha256


async def test_resume_with_fork_after_branch_switch_reports_drift_and_new_thread(
        spawn, workspace: Path) -> None:
    """Fixtures: `spawn` (server subprocess on a tmp store), `workspace` (git repo, fix/payment)."""
    client = await spawn(workspace=workspace)

    listed = await client.request("session/list", {})
    assert listed == {"threads": [], "next_cursor": None}
    assert await client.request("session/current", {}) is None

    started = await client.request("session/start", {"workspace": str(workspace),
                                                     "title": "fix payment rounding"})
    thread, session = started["thread_id"], started["session_id"]
    status = await client.wait_status(lambda s: s and s["session_id"] == session)
    assert status["branch"] == "fix/payment" and status["title"] == "fix payment rounding"
    assert status["verdict"] is None and status["drift"] is False

    (workspace / "payment.py").write_text("def charge(amount):\n    return round(amount, 2)\n")
    events = [
        {"type": "message", "role": "user", "text": "fix the rounding bug"},
        {"type": "todo", "items": [{"id": "1", "text": "round", "status": "done"},
                                   {"id": "2", "text": "test", "status": "pending"}]},
        {"type": "file_change", "path": "payment.py", "author": "agent",
         "after_hash": sha256(workspace / "payment.py")},
        {"type": "verifier", "kind": "tests", "passed": 3, "total": 4},
        {"type": "cost", "model": "m1", "input_tokens": 10, "output_tokens": 5, "usd": 0.25},
    ]
    recorded = await client.request("session/record", {"session_id": session, "events": events,
                                                      "durability": "durable"})
    seqs = [a["seq"] for a in recorded["acks"]]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(events)
    assert {a["durability"] for a in recorded["acks"]} == {"durable"}
    status = await client.wait_status(lambda s: s and s["tests"] == {"passed": 3, "total": 4})
    assert status["todos"] == {"done": 1, "total": 2} and status["cost_usd"] == 0.25

    report = await client.request("session/checkResume", {"thread_id": thread,
                                                          "workspace": str(workspace)})
    assert report["verdict"] == "ok", report["differences"]
    assert report["thread_id"] == thread and report["choices"] == []

    listed = await client.request("session/list", {})
    assert [t["thread_id"] for t in listed["threads"]] == [thread]
    assert listed["threads"][0]["todos"] == {"done": 1, "total": 2}

    git(workspace, "checkout", "-q", "-b", "feature/other")
    report = await client.request("session/checkResume", {"thread_id": thread,
                                                          "workspace": str(workspace)})
    assert report["verdict"] == "drift"
    branch = [d for d in report["differences"] if d["kind"] == "branch"]
    assert branch and branch[0]["recorded"] == "fix/payment"
    assert branch[0]["current"] == "feature/other"
    assert set(report["choices"]) == {"continue", "switch_back", "fork", "cancel"}

    resumed = await client.request("session/resume", {"thread_id": thread,
                                                      "workspace": str(workspace),
                                                      "decision": "fork"})
    forked = resumed["thread_id"]
    assert forked != thread and resumed["session_id"]
    assert resumed["report"]["verdict"] == "drift" and resumed["report"]["new_thread_id"] == forked
    status = await client.wait_status(lambda s: s and s["thread_id"] == forked)
    assert status["branch"] == "feature/other"
    assert status["todos"] == {"done": 1, "total": 2}  # the fork carries the restored state
    assert (await client.request("session/current", {}))["thread_id"] == forked

    shown = await client.request("session/show", {"thread_id": forked})
    assert shown["thread"]["thread_id"] == forked
    assert any(e["type"] == "lifecycle" and "fork" in e["summary"] for e in shown["timeline"])
    original = await client.request("session/show", {"thread_id": thread})
    kinds = [e["type"] for e in original["timeline"]]
    assert "verifier" in kinds and "operation" not in kinds and "message" not in kinds
    assert original["damaged"] == []
