"""Which session a tool call is about: the agent's own session, else the workspace's current thread.

In order: the session id the server was started with (`--session`); the one the agent gives —
Claude Code starts its MCP servers with `CLAUDE_CODE_SESSION_ID` in their environment, Codex puts
`session_id` in every call's `_meta["x-codex-turn-metadata"]` (and Claude Code the call's own
tool_use id, which `Tools.session` finds in the journal after a /clear); then, without one, the newest hook
journal recorded in the server's workspace, else its newest native thread. A session id that has
no journal is an error the model can read (the hooks were not installed when it started), never a
guess at another session. Reads only: the index rows of the journals and of the store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ToolInputInvalid, UnknownThread

if TYPE_CHECKING:
    from ..api import Keeper

AGENTS = ("claude", "codex")
CLAUDE_SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
"""What Claude Code (2.1.332) sets in the environment of the MCP servers it starts."""
CODEX_TURN_META = "x-codex-turn-metadata"
"""The `_meta` key of Codex's (0.171.0) tools/call requests holding its session and turn ids."""
CLAUDE_CALL_META = "claudecode/toolUseId"
"""The `_meta` key of Claude Code's (2.1.332) tools/call requests: the call's tool_use id, which
its PreToolUse hook recorded in the journal of the session making the call."""
NATIVE = "native"


@dataclass(frozen=True, kw_only=True)
class Target:
    """One session to answer about: a hook journal (agent + the agent's session id) or a native
    thread of the store (agent "native")."""

    agent: str
    thread_id: str
    how: str  # how it was found, said in every result (the model knows what it asked about)

    @property
    def journal(self) -> bool:
        """True for an agent session's hook journal."""
        return self.agent != NATIVE


@dataclass(frozen=True, kw_only=True)
class Caller:
    """What the server knows of who calls: its flags, its environment, the call's `_meta`."""

    agent: str | None = None  # --agent
    session_id: str | None = None  # --session
    workspace: str = "."
    env: Mapping[str, str] | None = None
    meta: Mapping[str, Any] | None = None

    def given(self) -> tuple[str | None, str, str] | None:
        """(agent or None, session id, how) the caller names, or None when it names none."""
        if self.session_id:
            return self.agent, self.session_id, "the session the server was started for"
        codex = (self.meta or {}).get(CODEX_TURN_META)
        if isinstance(codex, Mapping) and isinstance(codex.get("session_id"), str) \
                and self.agent in (None, "codex"):
            return "codex", codex["session_id"], "the Codex session making this call"
        env = os.environ if self.env is None else self.env
        if env.get(CLAUDE_SESSION_ENV) and self.agent in (None, "claude"):
            return "claude", env[CLAUDE_SESSION_ENV], "the Claude Code session that started the server"
        return None


def find(keeper: Keeper, caller: Caller) -> Target:
    """The session `caller` asks about; UnknownThread (with what to do) when there is none."""
    given = caller.given()
    if given is not None:
        return _named(keeper, *given)
    root = os.path.realpath(caller.workspace)
    agents = [caller.agent] if caller.agent in AGENTS else list(AGENTS)
    found: list[tuple[str, str, str]] = []  # (last activity, agent, thread)
    for agent in agents:
        if _journals_exist(keeper, agent):
            for row in keeper.journal_keeper(agent).rows(workspace=root, limit=1):
                found.append((row.last_activity or "", agent, row.thread_id))
    if found:
        _, agent, thread = max(found)
        return Target(agent=agent, thread_id=thread,
                      how=f"the newest {agent} session recorded in {root}")
    if caller.agent is None:
        rows = keeper.rows(workspace=root, limit=1)
        if rows:
            return Target(agent=NATIVE, thread_id=rows[0].thread_id,
                          how=f"the newest Session Keeper thread of {root}")
    raise UnknownThread(f"no session recorded in {root}: Session Keeper's hooks record the agents' "
                        "sessions (`sessionkeeper hooks install`, then start a new session)")


def _named(keeper: Keeper, agent: str | None, session_id: str, how: str) -> Target:
    """The journal of a named agent session (of `agent`, else of whichever agent has it)."""
    from .. import ids
    from ..agents.base import canonical_uuid

    uuid = canonical_uuid(session_id)
    if uuid is None:
        raise ToolInputInvalid(f"session id {session_id[:60]!r} is not an agent session id (a UUID)")
    thread = ids.thread_id(uuid)
    for name in [agent] if agent in AGENTS else list(AGENTS):
        assert name is not None
        if not _journals_exist(keeper, name):
            continue
        try:
            keeper.journal_keeper(name).thread_sessions(thread)
        except UnknownThread:
            continue
        return Target(agent=name, thread_id=thread, how=how)
    raise UnknownThread(f"no Session Keeper journal of {agent or 'agent'} session {thread}: its "
                        "hooks were not installed when it started (`sessionkeeper hooks install`, "
                        "then start a new session), or it ran with another store")


def _journals_exist(keeper: Keeper, agent: str) -> bool:
    """True when the store holds journals of `agent` (a read-only Keeper creates no folder)."""
    from ..keeper.journals import journal_root

    return os.path.isdir(journal_root(keeper.store.layout.root, agent))
