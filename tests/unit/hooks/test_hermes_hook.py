"""Hermes's shell hook answered by Session Keeper (fixture: a copy of fixtures/agents/hermes/real/)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sessionkeeper.hooks.hermes_hook import main
from tests.unit._agents import AGENT_FIXTURES

CHAT = "20261203_112415_6fd9132e"  # the Telegram DM of user 777 (recorded hashed)


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A store, with HERMES_HOME on a copy of the recorded home."""
    home = Path(shutil.copytree(AGENT_FIXTURES / "hermes" / "real", tmp_path / "hermes"))
    monkeypatch.setenv("HERMES_HOME", str(home))
    return str(tmp_path / "store")


def call(store: str, event: str, **extra: object) -> dict[str, object]:
    """One hook call as Hermes makes it; its parsed answer ({} for none)."""
    payload = {"hook_event_name": event, "session_id": CHAT, "cwd": "/nonexistent", "extra": extra}
    out = main(store, event, json.dumps(payload).encode())
    return json.loads(out) if out else {}


def test_a_chat_resumed_for_another_user_is_stopped_and_its_tools_blocked(store: str) -> None:
    """`store`: the DM of user 777 continued for user 999."""
    told = call(store, "pre_llm_call", is_first_turn=False, platform="telegram", sender_id="999")
    assert "Session Keeper stopped this resume" in str(told["context"]) and "999" not in str(told)
    assert call(store, "pre_tool_call")["decision"] == "block"
    assert call(store, "pre_llm_call", is_first_turn=False) == {}  # told once per Hermes process


def test_the_same_user_resuming_is_told_ok_and_a_fresh_session_nothing(store: str) -> None:
    """`store`: the DM continued for user 777 itself (a chat: no workspace to check)."""
    told = call(store, "pre_llm_call", is_first_turn=False, platform="telegram", sender_id="777")
    assert "checked ok" in str(told["context"])
    assert call(store, "pre_tool_call") == {}


def test_a_fresh_session_is_never_checked(store: str) -> None:
    """`store`: the first turn of a session (no history)."""
    assert call(store, "pre_llm_call", is_first_turn=True) == {}
    assert call(store, "pre_tool_call") == {}


def test_garbage_or_an_unknown_session_fails_open(store: str) -> None:
    """`store`: stdin that is not JSON, a list, and a session Hermes never had."""
    assert main(store, "pre_llm_call", b"{not json") == ""
    assert main(store, "pre_llm_call", b"[1, 2]") == ""
    payload = {"hook_event_name": "pre_llm_call", "session_id": "nope", "extra": {"is_first_turn": False}}
    assert main(store, "pre_llm_call", json.dumps(payload).encode()) == ""
