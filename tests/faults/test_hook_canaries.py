"""A canary of every shape sent through the agents' tool hooks (the thin hook's spool, issue 26)
never reaches any file of the store: not the spool the calls wait in, not the journal they are
folded into. Real hook processes (the console script); fixture CANARIES (canaries.py)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from sessionkeeper.api import Keeper
from tests.unit._hooks import SID, payload, run

from .canaries import CANARIES

AGENT = "claude"


def _leaks(store: Path, secret: str) -> list[str]:
    needles = {secret.encode(), orjson.dumps(secret)[1:-1]}
    return [str(p.relative_to(store)) for p in store.rglob("*") if p.is_file()
            for needle in needles if needle in p.read_bytes()]


@pytest.mark.parametrize("kind,secret,text", CANARIES, ids=[c[0] for c in CANARIES])
def test_a_canary_in_a_tool_call_never_reaches_the_spool_nor_the_journal(
        store_dir: Path, repo: Path, kind: str, secret: str, text: str) -> None:
    """Fixture: CANARIES, `repo`, `store_dir`; a session started by its hook, then a Bash call
    whose command, environment and output hold the canary, and a TodoWrite naming it."""
    def hook(event: str, **fields: object) -> None:
        done = run(AGENT, event, json.dumps(payload(AGENT, event, repo, **fields)), store_dir)
        assert done.returncode == 0 and done.stderr == "", done.stderr

    hook("SessionStart", source="startup")
    shell = {"tool_name": "Bash", "tool_use_id": "toolu_secret",
             "tool_input": {"command": f"deploy {text}", "env": {"NOTE": text}}}
    hook("PreToolUse", **shell)
    hook("PostToolUse", **shell, tool_response={"stdout": f"ok\n{text}\n", "lines": [text]})
    todo = {"tool_name": "TodoWrite", "tool_use_id": "toolu_todo",
            "tool_input": {"todos": [{"content": f"rotate {text}", "status": "pending"}]}}
    hook("PreToolUse", **todo)
    hook("PostToolUse", **todo, tool_response={})
    assert list((store_dir / "journals" / AGENT / "spool").glob("*.spool"))
    assert not _leaks(store_dir, secret), f"{kind} reached the spool"
    keeper = Keeper(store_dir)
    keeper.journal(AGENT, SID).close()  # folded into the journal
    state = keeper.read_journal(AGENT, SID)
    assert state is not None and "toolu_secret" in state.state["operations"].ledger
    assert not _leaks(store_dir, secret), f"{kind} reached the journal"
