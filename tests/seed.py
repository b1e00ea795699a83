"""The seed's story as a reusable recording: edits on fix/payment, todos, tests 7/9, an open op."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sessionkeeper.api import Keeper


def sha(path: Path) -> str:
    """sha256 hex of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record_seed(keeper: Keeper, repo: Path, *, close: bool = False):
    """Record the seed session in `repo`; returns the open (or closed) session."""
    session = keeper.start(repo, title="fix payment rounding",
                           permissions={"approval_mode": "on-request",
                                        "sandbox_policy": "workspace-write",
                                        "tool_profile": "coding"},
                           model="gpt-5")
    session.record({"type": "message", "role": "user", "text": "fix the rounding bug"})
    for name, text in (("payment.py", "def charge(amount):\n    return round(amount, 2)\n"),
                       ("test_payment.py", "from payment import charge\n\ndef test(): pass\n")):
        before = sha(repo / name)
        (repo / name).write_text(text)
        session.record({"type": "file_change", "path": name, "before_hash": before,
                        "after_hash": sha(repo / name), "author": "agent"})
    session.record({"type": "todo", "items": [
        {"id": "1", "text": "reproduce", "status": "done"},
        {"id": "2", "text": "fix rounding", "status": "in_progress"},
        {"id": "3", "text": "add regression test", "status": "pending"}]})
    session.record({"type": "verifier", "kind": "tests", "passed": 7, "total": 9,
                    "checkpoint": "tests: 7/9", "command": "pytest -q"})
    session.record({"type": "cost", "model": "gpt-5", "input_tokens": 12000,
                    "output_tokens": 800, "usd": 0.042})
    ticket = session.begin_operation("op-deploy-1", "shell", {"cmd": "make deploy-staging"})
    assert ticket.action == "run"
    if close:
        session.close()
    return session


def redate(path: Path, *, year: str = "2020") -> None:
    """Move every record of a rollout to `year` (re-framed, so the checksums stay valid)."""
    import orjson

    from sessionkeeper.store.codec import frame

    lines = []
    for raw in path.read_bytes().splitlines():
        record = orjson.loads(raw)
        del record["crc"]
        seq, ts = record.pop("seq"), record.pop("ts")
        lines.append(frame(seq, (year + ts[4:]).encode(), orjson.dumps(record)))
    path.write_bytes(b"".join(lines))


def crash(session) -> None:
    """Drop a session the way a killed process would: no final snapshot, lock released by the OS."""
    session.writer.recorder.sink.close()
    session.writer._lock.release()
