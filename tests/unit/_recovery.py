"""Helpers for the recovery tests: stored-record builders and a real workspace view."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sessionkeeper.events import plain
from sessionkeeper.recovery.baseline import capture, current_workspace
from sessionkeeper.recovery.subsystems.base import Workspace

THREAD = "00000000-0000-4000-8000-000000000001"
SESSION = "00000000-0000-4000-8000-000000000002"


def rec(seq: int, type_: str, /, **fields: Any) -> dict[str, Any]:
    """Return a stored record as the reader yields it: {"seq", "ts", "type", ...fields}."""
    return {"seq": seq, "ts": f"2025-01-01T00:00:{seq % 60:02d}Z", "type": type_, **fields}


def meta(root: Path, *, seq: int = 0, **fields: Any) -> dict[str, Any]:
    """Return a session_meta record for a session started in `root` (baseline captured now)."""
    baseline = capture(root)
    return rec(seq, "session_meta", schema_version=2, thread_id=THREAD, session_id=SESSION,
               cwd=str(root), baseline=plain(baseline) if baseline else None, **fields)


def folded(cls: type, *records: dict[str, Any]) -> Any:
    """A fresh `cls` subsystem folded over `records`, then restored from its own snapshot."""
    sub = cls()
    for record in records:
        sub.apply(record)
    restored = cls()
    restored.restore(sub.snapshot())
    return restored


def sha(text: str) -> str:
    """Return the sha256 hex of `text` encoded as UTF-8 (what file_hash gives for that content)."""
    return hashlib.sha256(text.encode()).hexdigest()


def edit(root: Path, seq: int, rel: str, text: str, *, author: str = "agent") -> dict[str, Any]:
    """Write `text` to root/rel and return the file_change record that says so."""
    path = root / rel
    before = sha(path.read_text()) if path.exists() else None
    path.write_text(text)
    return rec(seq, "file_change", path=rel, before_hash=before, after_hash=sha(text),
               author=author)


def workspace(root: Path, requested: Mapping[str, Any] | None = None) -> Workspace:
    """Return the real workspace at `root` (git baseline captured now, files hashed on demand)."""
    return current_workspace(str(root), requested=requested)
