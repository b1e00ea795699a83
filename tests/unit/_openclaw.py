"""OpenClaw stores for the tests, built from the fixture a real OpenClaw 2026.9.6 run produced.

`fixtures/agents/openclaw/` holds that run's schema (the CREATE statements OpenClaw made), its
rows and its transcript events (`capture.py` there); `build` writes them as an OpenClaw state dir
`<root>/agents/<agentId>/agent/openclaw-agent.sqlite`, with the changes a test asks for.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES

HERE = FIXTURES / "agents" / "openclaw"
SESSION = "b61ed249-80ec-41e4-8063-b101121fea8a"
KEY = "agent:main:main"
CWD = "/work/repo-a"


def events() -> list[dict[str, Any]]:
    """The real run's transcript rows {session_id, seq, created_at, event} in seq order."""
    return [json.loads(line) for line in (HERE / "events.jsonl").read_text().splitlines() if line]


def store_rows() -> dict[str, Any]:
    """The real run's schema_meta and windows."""
    return dict(json.loads((HERE / "store.json").read_text()))


def db_path(root: Path, agent: str = "main") -> Path:
    """Where OpenClaw keeps an agent's store under a state dir."""
    return root / "agents" / agent / "agent" / "openclaw-agent.sqlite"


def build(root: Path, *, agent: str = "main", rows: Iterable[dict[str, Any]] | None = None,
          session: str = SESSION, cwd: str = CWD, extra_windows: Iterable[str] = ()) -> Path:
    """An OpenClaw state dir at `root` with one agent store holding the fixture's session (as
    `session`, in `cwd`), or `rows` in its place; `extra_windows` more session ids under the
    same key (the key's current one is the last). Returns the store's path."""
    path = db_path(root, agent)
    path.parent.mkdir(parents=True, exist_ok=True)
    db = connect(path)
    db.executescript((HERE / "schema.sql").read_text())
    fixture = store_rows()
    meta = {**fixture["schema_meta"], "agent_id": agent}
    db.execute(f"INSERT INTO schema_meta ({', '.join(meta)}) VALUES ({', '.join('?' * len(meta))})",
               list(meta.values()))
    [first] = fixture["windows"]
    ids = [session, *extra_windows]
    node = {**first["node"], "session_key": KEY, "current_session_id": ids[-1]}
    _insert(db, "session_nodes", {**node, "entry_json": "{}"})
    for sid in ids:
        _insert(db, "session_windows", {**first["window"], "session_id": sid, "session_key": KEY})
        _insert(db, "transcript_rewrite_watermarks", {"session_id": sid, "generation": "g1",
                                                      "updated_at": 1})
    for row in rows if rows is not None else fixture_rows(session, cwd=cwd):
        add(db, row)
    db.commit()
    db.close()
    return path


def fixture_rows(session: str = SESSION, *, cwd: str = CWD) -> list[dict[str, Any]]:
    """The fixture's events for `session` in `cwd`."""
    out = []
    for row in events():
        event = row["event"].replace(SESSION, session).replace(CWD, cwd)
        out.append({**row, "session_id": session, "event": event})
    return out


def add(db: sqlite3.Connection, row: dict[str, Any], *, compressed: bool = False) -> None:
    """Insert one transcript row (`event` as text, or a zstd frame as OpenClaw stores a big one)
    and raise its window's transcript_updated_at strictly, as OpenClaw's transcript store does."""
    db.execute("UPDATE session_windows SET transcript_updated_at = max(coalesce(transcript_updated_at, 0) "
               "+ 1, ?) WHERE session_id = ?", (row["created_at"], row["session_id"]))
    text = row["event"]
    if compressed:
        import zstandard

        data = text.encode()
        db.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, "
                   "event_utf8_bytes, navigation_json) VALUES (?, ?, NULL, ?, ?, ?, ?)",
                   (row["session_id"], row["seq"], row["created_at"],
                    zstandard.ZstdCompressor(level=1, write_checksum=True).compress(data), len(data),
                    _navigation()))
    else:
        db.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at) "
                   "VALUES (?, ?, ?, ?)", (row["session_id"], row["seq"], text, row["created_at"]))


def append(path: Path, session: str, event: dict[str, Any] | str, *, created_at: int | None = None,
           compressed: bool = False) -> int:
    """Append one event to a window of the store at `path` (as OpenClaw does); its seq."""
    db = connect(path)
    try:
        last, at = db.execute("SELECT max(seq), max(created_at) FROM transcript_events "
                              "WHERE session_id = ?", (session,)).fetchone()
        seq = (last if last is not None else -1) + 1
        text = event if isinstance(event, str) else json.dumps(event, separators=(",", ":"))
        add(db, {"session_id": session, "seq": seq, "created_at": created_at or (at or 0) + 1000,
                 "event": text}, compressed=compressed)
        db.commit()
    finally:
        db.close()
    return seq


def message(role: str, text: str, *, ts: str = "2026-12-03T11:08:00.000Z") -> dict[str, Any]:
    """A transcript message event in OpenClaw's shape."""
    return {"type": "message", "id": f"m-{abs(hash((role, text, ts))) % 10**12}", "parentId": None,
            "timestamp": ts, "message": {"role": role, "content": [{"type": "text", "text": text}]}}


def connect(path: Path) -> sqlite3.Connection:
    """A connection that can write OpenClaw's tables: their CHECKs call `octet_length`, which
    SQLite has only since 3.43 (this Python's may be older)."""
    db = sqlite3.connect(path)
    db.create_function("octet_length", 1, lambda v: None if v is None else len(
        v.encode() if isinstance(v, str) else bytes(v)), deterministic=True)
    return db


def _insert(db: sqlite3.Connection, table: str, row: dict[str, Any]) -> None:
    db.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
               list(row.values()))


def _navigation() -> str:
    return json.dumps({"version": 1, "report": {"kind": "ignored"}, "navigation": {}, "reset": {},
                       "model": {}, "modelBytes": 0, "modelWithoutCheckpointBytes": 0,
                       "withoutCustomDataBytes": 0})
