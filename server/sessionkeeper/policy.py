"""How a session records (redaction, snapshots, file content) and when it resets (idle, daily):
values the Keeper holds from its start, kept apart from the session and the lifecycle so that
building a Keeper imports no recording code and no hooks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum


@dataclass(frozen=True, kw_only=True)
class SessionPolicy:
    """How a session records: redaction, when it snapshots, what file content it may keep."""

    redact: bool = True
    snapshot_min_bytes: int = 256 * 1024
    content_limit_bytes: int = 10 * 1024 * 1024
    """Files larger than this are recorded by hash only."""
    allow_secret_files: bool = False
    """Keep the content of secret-named files (`.env*`, keys) too; by default they are hashed only."""


class ResetPolicy(str, Enum):
    """When an idle or daily boundary turns into an `idle_reset` (the IDE default is none)."""

    NONE = "none"
    IDLE = "idle"
    DAILY = "daily"
    BOTH = "both"

    def due(
        self,
        last_activity: datetime,
        now: datetime,
        *,
        idle_after: timedelta = timedelta(hours=24),
        at_hour: int = 4,
    ) -> str | None:
        """Return the reason for an `idle_reset` if one is due, else None (first trigger wins)."""
        reasons: list[tuple[datetime, str]] = []
        if self in (ResetPolicy.IDLE, ResetPolicy.BOTH) and now - last_activity >= idle_after:
            reasons.append((last_activity + idle_after,
                            f"idle for {_span(now - last_activity)} (limit {_span(idle_after)})"))
        if self in (ResetPolicy.DAILY, ResetPolicy.BOTH):
            boundary = now.replace(hour=at_hour, minute=0, second=0, microsecond=0)
            if boundary > now:
                boundary -= timedelta(days=1)
            if last_activity < boundary:
                reason = f"daily reset at {at_hour:02d}:00 passed ({boundary.isoformat()})"
                reasons.append((boundary, reason))
        return min(reasons)[1] if reasons else None


def _span(delta: timedelta) -> str:
    """Format a duration as e.g. '1d 02:03:04' or '02:03:04'."""
    total = int(delta.total_seconds())
    days, rest = divmod(total, 86400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}d {text}" if days else text
