"""The Keeper's catalog: thread listings with their estimated resume state, and replay.

Reading never writes a rollout: it first writes out what this Keeper's own open sessions
acknowledged (so a read sees it), and imports the agents' logs when they may have changed (their
index rows only). A rollout that claims a thread's id without continuing it is reported as damage,
never folded into the thread.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..store.index import ListQuery, SessionRow, ThreadRow

if TYPE_CHECKING:
    from ..recovery.replay import Replayed
    from ..recovery.summary import BaselineSource, ThreadSummary
    from ..store.catalog import Progress
    from .agent_threads import AgentThreads
    from .ground import Ground
    from .journals import Journals
    from .listing import BaselineCache
    from .sharing import Sharing


class Catalog:
    """The reads: rows and summaries of threads, a thread's sessions, its replayed state."""

    def __init__(self, ground: Ground, sharing: Sharing, journals: Journals[Any],
                 agent_threads: AgentThreads) -> None:
        """`sharing`: the team's rows and pulls; `journals`: which agent threads have one;
        `agent_threads`: the threads read from the agents' files."""
        self.ground = ground
        self.sharing = sharing
        self.journals = journals
        self.agents = agent_threads
        self.baselines: BaselineCache | None = None  # a long-lived process's git cache

    def rows(self, *, workspace: str | None = None, include_archived: bool = False,
             archived_only: bool = False, cursor: tuple[str, str] | None = None,
             limit: int = 50, agent: str | None = None, machine: str | None = None,
             progress: Progress | None = None) -> list[ThreadRow]:
        """Index rows of threads, newest first (of one workspace, agent or machine, if given;
        archived ones too, or only those); the agents' logs are imported first when they may
        have changed (`progress` while reading)."""
        cwd = os.path.realpath(workspace) if workspace else None
        self.ground.live.flush()
        self.agents.import_agents(progress)
        query = ListQuery(cwd=cwd, include_archived=include_archived, archived_only=archived_only,
                          cursor=cursor, limit=limit, agent=agent,
                          agents=self.agents.agent_filter(), machine=machine)
        return self.sharing.shared_threads(query, self.ground.store.list_threads(query))

    def threads(self, *, workspace: str | None = None, include_archived: bool = False,
                archived_only: bool = False, cursor: tuple[str, str] | None = None,
                limit: int = 50, agent: str | None = None, machine: str | None = None,
                progress: Progress | None = None) -> list[ThreadSummary]:
        """Thread summaries, each with an estimated resume state against `workspace`
        (repository, branch, HEAD; one git look-up for the whole page, or none while the
        Keeper's `baselines` cache holds the workspace)."""
        from .listing import summaries, workspace_baseline

        rows = self.rows(workspace=workspace, include_archived=include_archived,
                         archived_only=archived_only, cursor=cursor, limit=limit, agent=agent,
                         machine=machine, progress=progress)
        hooked = self.journals.journaled(rows)
        sources: dict[str, BaselineSource] = {
            row.thread_id: "hook" if row.thread_id in hooked else "log"
            for row in rows if row.agent in ("codex", "claude")}
        if not rows or workspace is None:
            return summaries(rows, workspace=None, baseline=None, sources=sources)
        root = os.path.realpath(workspace)
        current = self.baselines.get(root) if self.baselines is not None \
            else workspace_baseline(root)
        return summaries(rows, workspace=root, baseline=current, sources=sources)

    def replay(self, thread_id: str, *, full: bool = False) -> Replayed:
        """Rebuild a thread's state from its latest snapshot and the tail after it.

        A rollout that claims the thread's id without continuing it is not folded: it is damage
        (so a resume is blocked until a human looks), never a silent part of the thread.
        """
        if self.agents.is_agent_thread(thread_id):
            return self.agents.replay_agent(thread_id)
        from ..recovery.replay import replay
        from ..store.log import thread_log

        store = self.ground.store
        self.ground.live.flush(thread_id)
        members, foreign = store.chain(thread_id)
        rollouts = store.read_thread(thread_id, full=full, rows=members)
        if self.ground.spooled:
            from .journal_fold import with_spool

            rollouts = with_spool(rollouts, str(store.layout.root), thread_id)
        replayed = replay(rollouts, log=thread_log(store, thread_id))
        replayed.damaged += [
            {"session_id": row.session_id, "line": 1, "kind": "foreign_session",
             "reason": f"{row.path} claims this thread (seq {row.first_seq}) but continues no "
                       "session of it"} for row in foreign]
        return replayed

    def thread_sessions(self, thread_id: str) -> list[SessionRow]:
        """The session rows of a thread, oldest first (an agent thread's: its files)."""
        found = self.agents.agent_sessions(thread_id)
        if found:
            return [row for row, _ in found]
        self.sharing.pull(thread_id)
        return self.ground.store.thread_sessions(thread_id)
