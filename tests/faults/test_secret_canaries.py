"""A canary per credential shape, recorded through the public API in every place an event can
carry text, must never reach any file of the store (reliability.md §4.6 S3; issue 12 item 14).

Per shape: `Keeper().start(...)` with the canary in the title and the model name, then the canary
in a message, operation args (nested) and result, a todo, a verifier, a file_change path (unless
the text holds a URL, which path normalisation would break), a title, a model record, a cost
record, a compaction summary, a clear reason and an event's `data`; the
session is torn mid-record (a kill) and resumed, so there is a quarantined tail, a snapshot, an
index row, state.db and its -wal. Then every file under the store is searched for the raw secret
(and its JSON-escaped form).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest

from sessionkeeper.api import Keeper

from .canaries import CANARIES


def _record_everywhere(keeper: Keeper, repo: Path, text: str) -> str:
    """Record `text` in every place the API lets an event carry it; returns the thread id."""
    session = keeper.start(repo, title=f"deploy: {text}", model=f"gpt-5 {text}")
    record = session.record
    record({"type": "message", "role": "user", "text": f"please use this: {text}",
            "data": {"note": text, "nested": [text, {"deep": text}]}})
    ticket = session.begin_operation("op-1", "shell", {"cmd": text, "env": {"NOTE": text},
                                                       "argv": ["sh", "-c", text]})
    assert ticket.action == "run"
    session.finish_operation("op-1", result={"stdout": f"ok\n{text}\n", "lines": [text]})
    record({"type": "todo", "items": [{"id": "1", "text": f"rotate {text}", "status": "pending"}]})
    record({"type": "verifier", "kind": "review", "findings": [f"leaked {text}"],
            "command": f"scan {text}", "checkpoint": text})
    if "//" not in text:  # a path is normalised: `a//b` becomes `a/b`, which is not a URL
        record({"type": "file_change", "path": f"notes/{text}.txt", "after_hash": "0" * 64,
                "author": "agent"})
    record({"type": "title", "title": f"title {text}"})
    record({"type": "model", "name": f"model {text}", "overrides": {"system": text}})
    record({"type": "cost", "model": f"gpt-5 {text}", "input_tokens": 10, "output_tokens": 2})
    session.compact(f"summary mentions {text}")
    session.clear(reason=f"user asked; {text}")
    record({"type": "message", "role": "assistant", "text": f"last words {text}"})
    session.writer.recorder.flush()
    path = Path(session.path)
    thread = session.thread_id
    session.writer._lock.release()  # a kill: the lock dies with its holder, nothing is closed
    keeper.live.clear()
    data = path.read_bytes()
    path.write_bytes(data[:-25])  # the last line torn mid-way, as a kill during write() leaves it
    return thread


def _every_file(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("kind,secret,text", CANARIES, ids=[c[0] for c in CANARIES])
def test_a_canary_of_every_shape_never_reaches_any_file_of_the_store(store_dir: Path, repo: Path, kind: str,
                                                                     secret: str, text: str) -> None:
    """Fixture: CANARIES (tests/faults/canaries.py), one store per shape; `repo` as workspace."""
    keeper = Keeper(store_dir)
    thread = _record_everywhere(keeper, repo, text)
    report, session = Keeper(store_dir).resume(thread, workspace=str(repo), decision="continue")
    assert session is not None, report.verdict
    assert len(report.quarantined) == 1, "the torn tail should have been quarantined"
    session.record({"type": "message", "role": "user", "text": f"after resume {text}"})
    session.close()
    Keeper(store_dir).fsck()
    con = sqlite3.connect(store_dir / "state.db")  # an open reader keeps the -wal file around
    try:
        con.execute("SELECT count(*) FROM sessions").fetchone()
        files = _every_file(store_dir)
    finally:
        con.close()
    names = {p.name for p in files}
    assert "state.db" in names and any(n.endswith(".torn") for n in names), sorted(names)
    assert any(n.endswith(".jsonl") for n in names)
    needles = {secret.encode(), orjson.dumps(secret)[1:-1]}
    leaks = [(str(p.relative_to(store_dir)), needle[:16]) for p, blob in files.items()
             for needle in needles if needle in blob]
    assert not leaks, f"{kind} reached the store: {leaks}"
    blob = b"".join(files.values())
    assert b"[REDACTED:" in blob
    assert b"please use this" in blob, "the message itself must still be there"
