"""Hermes's reset policy as Hermes reads it, and when a reset came due (no fixture: written homes)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from sessionkeeper.agents.hermes_policy import ResetPolicy, notes, policy_for

MSG = datetime(2026, 12, 1, 22, 30)


@pytest.mark.parametrize(("policy", "now", "due"), [
    (ResetPolicy("none"), datetime(2027, 1, 1), None),
    (ResetPolicy("idle", idle_minutes=60), datetime(2026, 12, 1, 23, 29), None),
    (ResetPolicy("idle", idle_minutes=60), datetime(2026, 12, 1, 23, 31),
     ("idle", datetime(2026, 12, 1, 23, 30))),
    (ResetPolicy("daily", at_hour=4), datetime(2026, 12, 2, 3, 59), None),
    (ResetPolicy("daily", at_hour=4), datetime(2026, 12, 2, 4, 0), ("daily", datetime(2026, 12, 2, 4, 0))),
    (ResetPolicy("both", at_hour=4, idle_minutes=1440), datetime(2026, 12, 2, 5),
     ("daily", datetime(2026, 12, 2, 4))),
    (ResetPolicy("both", at_hour=4, idle_minutes=60), datetime(2026, 12, 2, 5),
     ("idle", datetime(2026, 12, 1, 23, 30))),
])
def test_a_reset_comes_due_as_hermes_decides_it(policy: ResetPolicy, now: datetime,
                                                due: tuple[str, datetime] | None) -> None:
    """No fixture: a message at 22:30; daily at 04:00 and idle timeouts as Hermes compares them."""
    assert policy.reset_since(MSG, now) == due


def test_a_platform_policy_beats_a_chat_types_which_beats_config_yaml(tmp_path: Path) -> None:
    """No fixture: a home with gateway.json overrides and config.yaml's session_reset."""
    (tmp_path / "config.yaml").write_text("session_reset:\n  mode: idle\n  idle_minutes: 30\n")
    (tmp_path / "gateway.json").write_text(json.dumps({
        "reset_by_platform": {"discord": {"mode": "daily", "at_hour": 6}},
        "reset_by_type": {"group": {"mode": "none"}}}))
    assert policy_for(tmp_path, platform="discord", chat_type="group", env={}).describe() == \
        "daily (daily at 06:00 local time)"
    assert policy_for(tmp_path, platform="telegram", chat_type="group", env={}).mode == "none"
    dm = policy_for(tmp_path, platform="telegram", chat_type="dm", env={"SESSION_IDLE_MINUTES": "90"})
    assert (dm.mode, dm.idle_minutes, dm.source) == ("idle", 90, "config.yaml session_reset (+ env)")
    assert policy_for(tmp_path / "none", platform="telegram", chat_type="dm", env={}) == ResetPolicy()


def test_a_terminal_session_gets_no_policy_line_and_a_chat_gets_its_due_reset(tmp_path: Path) -> None:
    """No fixture: the metas of a cli session and of a Telegram DM a day old."""
    (tmp_path / "config.yaml").write_text("session_reset:\n  mode: both\n")
    agent = {"path": f"{tmp_path}/state.db#x", "last_message_at": "2026-12-01T12:00:00.000Z"}
    cli = {"data": {"agent": {**agent, "source_context": {"platform": "cli", "chat": False}}}}
    assert notes(cli, now=datetime(2026, 12, 3).timestamp()) == []
    chat = {"data": {"agent": {**agent, "source_context": {"platform": "telegram", "chat": True,
                                                           "chat_type": "dm"}}}}
    lines = notes(chat, now=datetime(2026, 12, 3).timestamp())
    assert lines[0].startswith("Hermes reset policy for telegram/dm chats: both")
    assert "reset of this chat came due" in lines[1] and "not drift" in lines[1]
    ended = {"data": {"agent": {**chat["data"]["agent"], "ended": {"reason": "idle", "at": "x"}}}}
    assert "Hermes reset this chat's session (idle)" in notes(ended)[1]
