"""Helpers of the agent-thread contract tests: a Keeper reading given agent homes, and a line
appended to a Claude Code transcript."""

from __future__ import annotations

from pathlib import Path

import orjson

from sessionkeeper.agents.importer import AgentSources
from sessionkeeper.api import Keeper
from tests.unit._agents import generator

GEN = generator()


def keeper_of(store: Path, **roots: Path) -> Keeper:
    """A Keeper of `store` reading the agents named by `roots` (agent -> home) there only."""
    return Keeper(store, agents=AgentSources(agents=tuple(roots),
                                             roots={k: (str(v),) for k, v in roots.items()}))


def append_title(root: Path, title: str) -> None:
    """Append a custom-title line to the one Claude Code transcript under `root`."""
    [transcript] = list(root.glob("projects/*/*.jsonl"))
    with open(transcript, "ab") as handle:
        handle.write(orjson.dumps({"type": "custom-title", "customTitle": title,
                                   "sessionId": GEN.CLAUDE_SESSION}) + b"\n")
