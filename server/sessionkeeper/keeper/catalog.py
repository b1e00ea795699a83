"""The Keeper's reading: thread listings with their estimated resume state, and replay.

Reading never writes a rollout: it first writes out what this Keeper's own open sessions
acknowledged (so a read sees it), and imports the agents' logs when they may have changed (their
index rows only). A rollout that claims a thread's id without continuing it is reported as damage,
never folded into the thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..store.index import ListQuery, SessionRow, ThreadRow
from .agent_threads import AgentThreads
from .journals import Journals
from .sharing import Sharing

if TYPE_CHECKING:
    from ..recovery.replay import Replayed
    from ..recovery.summary import BaselineSource, ThreadSummary

Progress = Callable[[int, int], None]


class Reading(Sharing, Journals, AgentThreads):
    """`Keeper`'s reads: rows and summaries of threads, a thread's sessions, its replayed state."""

    def rows(self, *, workspace: str | None = None, include_archived: bool = False,
             cursor: tuple[str, str] | None = None, limit: int = 50, agent: str | None = None,
             machine: str | None = None, progress: Progress | None = None) -> list[ThreadRow]:
        """Index rows of threads, newest first (of one workspace, agent or machine, if given);
        the agents' logs are imported first when they may have changed (`progress` while
        reading)."""
        cwd = os.path.realpath(workspace) if workspace else None
        self._sync_live()
        self.import_agents(progress)
        query = ListQuery(cwd=cwd, include_archived=include_archived, cursor=cursor, limit=limit,
                          agent=agent, agents=self.agent_filter(), machine=machine)
        return self.shared_threads(query, self.store.list_threads(query))

    def threads(self, *, workspace: str | None = None, include_archived: bool = False,
                cursor: tuple[str, str] | None = None, limit: int = 50, agent: str | None = None,
                machine: str | None = None, progress: Progress | None = None
                ) -> list[ThreadSummary]:
        """Thread summaries, each with an estimated resume state against `workspace`
        (repository, branch, HEAD; one git look-up for the whole page, or none while the
        Keeper's `baselines` cache holds the workspace)."""
        from .listing import summaries, workspace_baseline

        rows = self.rows(workspace=workspace, include_archived=include_archived, cursor=cursor,
                         limit=limit, agent=agent, machine=machine, progress=progress)
        hooked = self.journaled(rows)
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
        if self.is_agent_thread(thread_id):
            return self.replay_agent(thread_id)
        from ..recovery.replay import replay
        from ..store.log import thread_log

        self._sync_live(thread_id)
        members, foreign = self.store.chain(thread_id)
        rollouts = self.store.read_thread(thread_id, full=full, rows=members)
        if self.spooled:
            from .journal_fold import with_spool

            rollouts = with_spool(rollouts, str(self.store.layout.root), thread_id)
        replayed = replay(rollouts, log=thread_log(self.store, thread_id))
        replayed.damaged += [
            {"session_id": row.session_id, "line": 1, "kind": "foreign_session",
             "reason": f"{row.path} claims this thread (seq {row.first_seq}) but continues no "
                       "session of it"} for row in foreign]
        return replayed

    def thread_sessions(self, thread_id: str) -> list[SessionRow]:
        """The session rows of a thread, oldest first (an agent thread's: its files)."""
        found = self.agent_sessions(thread_id)
        if found:
            return [row for row, _ in found]
        self.pull(thread_id)
        return self.store.thread_sessions(thread_id)
