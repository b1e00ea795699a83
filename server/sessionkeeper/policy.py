"""How a session records (redaction, snapshots, file content): a value the Keeper holds from
its start, kept apart from the session so that building a Keeper imports no recording code."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class SessionPolicy:
    """How a session records: redaction, when it snapshots, what file content it may keep."""

    redact: bool = True
    snapshot_min_bytes: int = 256 * 1024
    content_limit_bytes: int = 10 * 1024 * 1024
    """Files larger than this are recorded by hash only."""
    allow_secret_files: bool = False
    """Keep the content of secret-named files (`.env*`, keys) too; by default they are hashed only."""
