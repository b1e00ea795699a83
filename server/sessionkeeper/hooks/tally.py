"""How many tool hook calls an agent made, and the last one: `<store>/hooks/runs/<agent>.tool-calls`
holds one byte per call (`MARKS`: which event), appended by the thin hook, so its size counts them
and its mtime says when the last one ran. Standard library only (every tool call appends here)."""

from __future__ import annotations

import os

MARKS = {"PreToolUse": b"<", "PostToolUse": b">", "PostToolUseFailure": b"!"}
"""The byte each tool event appends."""


def path_of(store_root: str, agent: str) -> str:
    """The tally of an agent's tool hook calls in a store."""
    return os.path.join(store_root, "hooks", "runs", f"{agent}.tool-calls")


def count(store_root: str, agent: str, event: str) -> None:
    """Count one call (nothing when the store has no hooks/runs yet: no start hook ran there)."""
    try:
        fd = os.open(path_of(store_root, agent),
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        os.write(fd, MARKS.get(event, b">"))
    finally:
        os.close(fd)


def read(store_root: str, agent: str) -> tuple[int, str | None, float | None]:
    """(calls counted, the event of the last one, when it ran); (0, None, None) when none."""
    try:
        with open(path_of(store_root, agent), "rb") as handle:
            marks = handle.read()
            at = os.fstat(handle.fileno()).st_mtime
    except OSError:
        return 0, None, None
    if not marks:
        return 0, None, None
    return len(marks), {v: k for k, v in MARKS.items()}.get(marks[-1:], "PostToolUse"), at
