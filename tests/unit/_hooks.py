"""Helpers for the agent-hook tests: hook stdin as the agents send it, calls in-process and as
real processes, and what a journal holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sessionkeeper.api import Keeper
from sessionkeeper.hooks.answers import Answer
from sessionkeeper.hooks.entries import thin_program
from sessionkeeper.hooks.payload import parse
from sessionkeeper.hooks.respond import respond
from sessionkeeper.recovery.replay import Replayed

SID = "5c7b1e2a-3d4f-4a6b-8c9d-0e1f2a3b4c5d"
SK = str(Path(sys.executable).parent / "sessionkeeper")
"""The console script (`sessionkeeper hook ...` typed by hand)."""
HOOK = thin_program()
"""What the installed hooks run: this interpreter with -S on the package's __main__.py."""


def payload(agent: str, event: str, cwd: Path | str, *, session_id: str = SID,
            **fields: Any) -> dict[str, Any]:
    """A hook's stdin object, shaped as the agent sends it (recipe §6)."""
    data: dict[str, Any] = {"session_id": session_id, "cwd": str(cwd), "hook_event_name": event,
                            "transcript_path": f"/nowhere/{session_id}.jsonl"}
    if agent == "codex":
        data.update(model="gpt-5", permission_mode="bypassPermissions")
    return {**data, **fields}


def call(agent: str, event: str, cwd: Path | str, store: Path, **fields: Any) -> Answer:
    """One hook call in-process (parse + respond): the typed answer."""
    raw = json.dumps(payload(agent, event, cwd, **fields)).encode()
    return respond(parse(agent, event, raw), store=str(store))


def run(agent: str, event: str, stdin: bytes | str, store: Path, *,
        env: dict[str, str] | None = None, cwd: Path | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """One hook call as the agents make it: the installed command, stdin, exit status."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    done = subprocess.run([*HOOK, "hook", "--store", str(store), agent, event], input=data,
                          capture_output=True, env={**os.environ, **(env or {})}, cwd=cwd,
                          timeout=timeout)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(),
                                       done.stderr.decode())


def journal(store: Path, agent: str, session_id: str = SID) -> Replayed | None:
    """The agent session's journal, folded (None when there is none)."""
    return Keeper(store, read_only=True).read_journal(agent, session_id)


def records(store: Path, agent: str, session_id: str = SID) -> list[dict[str, Any]]:
    """Every record of the journal, in order (snapshots left out)."""
    rollouts = Keeper(store, read_only=True).journal_rollouts(agent, session_id)
    return [r for rollout in rollouts for r in rollout.records if r["type"] != "snapshot"]


def context(answer: Answer) -> str:
    """The additionalContext an answer gives the model ("" when none)."""
    out = answer.output or {}
    return str((out.get("hookSpecificOutput") or {}).get("additionalContext") or "")
