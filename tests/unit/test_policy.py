"""The reset policy turns idle or daily boundaries into `idle_reset` reasons (fixed clock)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sessionkeeper.api import Keeper
from sessionkeeper.policy import ResetPolicy

UTC = timezone.utc
NOON = datetime(2025, 3, 10, 12, 0, tzinfo=UTC)


def test_a_keeper_resets_nothing_by_default_even_after_a_week(tmp_path) -> None:
    """Fixture: a Keeper made without a reset policy; a week of inactivity."""
    policy = Keeper(tmp_path / "store").reset_policy
    assert policy.due(NOON - timedelta(days=7), NOON) is None


def test_idle_policy_resets_after_the_idle_limit() -> None:
    """Fixture: last activity 2h or 30min before noon, limit 1h."""
    limit = timedelta(hours=1)
    assert ResetPolicy.IDLE.due(NOON - timedelta(hours=2), NOON, idle_after=limit) == (
        "idle for 02:00:00 (limit 01:00:00)")
    assert ResetPolicy.IDLE.due(NOON - timedelta(minutes=30), NOON, idle_after=limit) is None


def test_daily_policy_resets_once_the_daily_hour_passed_since_last_activity() -> None:
    """Fixture: at_hour 4; activity at 03:00 vs 05:00 on the same day, checked at noon."""
    assert ResetPolicy.DAILY.due(NOON.replace(hour=3), NOON) == (
        "daily reset at 04:00 passed (2025-03-10T04:00:00+00:00)")
    assert ResetPolicy.DAILY.due(NOON.replace(hour=5), NOON) is None


def test_daily_policy_before_the_hour_looks_at_yesterdays_boundary() -> None:
    """Fixture: now 02:00; last activity yesterday 23:00 (no boundary) and 03:00 (boundary)."""
    now = NOON.replace(hour=2)
    assert ResetPolicy.DAILY.due(now - timedelta(hours=3), now) is None
    assert ResetPolicy.DAILY.due(now - timedelta(hours=23), now) is not None


def test_both_policy_reports_whichever_boundary_came_first() -> None:
    """Fixture: idle limit 1h; last activity 03:30, daily boundary 04:00, idle boundary 04:30."""
    reason = ResetPolicy.BOTH.due(NOON.replace(hour=3, minute=30), NOON,
                                  idle_after=timedelta(hours=1))
    assert reason is not None and reason.startswith("daily reset")
    reason = ResetPolicy.BOTH.due(NOON.replace(hour=3, minute=30), NOON,
                                  idle_after=timedelta(minutes=10))
    assert reason is not None and reason.startswith("idle for 08:30:00")
