"""`Keeper`: the one object a caller holds — each method hands its work to one of the services."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent_threads import AgentThreads
from .catalog import Catalog
from .content import Content
from .ground import Ground, OpenSessions
from .journals import WAIT_S, Journals
from .resuming import Recovery
from .sessions import Sessions
from .sharing import Sharing
from .upkeep import Progress, Upkeep

if TYPE_CHECKING:
    from filelock import BaseFileLock

    from ..agents.importer import AgentSources, ImportCounts
    from ..events import Durability
    from ..policy import ResetPolicy, SessionPolicy
    from ..recovery.diff import FileDiff
    from ..recovery.lifecycle import HookRegistry
    from ..recovery.replay import Replayed
    from ..recovery.report import AgentCommand, Decision, Report
    from ..recovery.summary import ThreadSummary
    from ..schema import ClientInfo, Permissions
    from ..session.live import Session
    from ..store.blobs import BlobStore, GcReport
    from ..store.fsck import FsckReport
    from ..store.index import SessionRow, ThreadRow
    from ..store.reader import Rollout
    from ..store.remote.pull import PullReport
    from ..store.remote.push import PushReport
    from ..store.remote.shared import Shared
    from ..store.store import Store
    from .listing import BaselineCache
    from .rewinding import RewindReport

class Keeper:
    """One store, its hooks and its defaults; creates, resumes and forks sessions.

    Content settings: files over `content_limit_bytes` are kept by hash only, secret-named files
    too unless `allow_secret_files`; `blob_cap_bytes` caps the blob store when `gc()` runs.
    `agents`: the agents' own logs listed and checked as threads (None: only our rollouts).
    """

    def __init__(self, store: Path | str | None = None, *, durability: Durability | str = "written",
                 redact: bool = True, snapshot_min_bytes: int = 256 * 1024,
                 client: ClientInfo | Callable[[], ClientInfo] | None = None,
                 hooks: HookRegistry | None = None,
                 reset_policy: ResetPolicy | str = "none", read_only: bool = False,
                 content_limit_bytes: int = 10 << 20, allow_secret_files: bool = False,
                 blob_cap_bytes: int | None = None, agents: AgentSources | None = None,
                 spooled: bool = False, shared_index: str | None = None) -> None:
        """`read_only`: only read the store (nothing created or changed on disk); `client`: who
        records, or a function making it when first recorded (a listing then imports no schema);
        `spooled`: a store of agent session journals, whose threads' tool hooks spool their calls
        (`journal_fold`): reading a thread includes what its spool holds; `shared_index`: a
        postgresql:// URL sharing the store's sessions (`sharing`). Nothing is opened yet."""
        self.ground = ground = Ground(
            store, durability=durability, redact=redact, snapshot_min_bytes=snapshot_min_bytes,
            client=client, hooks=hooks, reset_policy=reset_policy, read_only=read_only,
            content_limit_bytes=content_limit_bytes, allow_secret_files=allow_secret_files,
            blob_cap_bytes=blob_cap_bytes, agents=agents, spooled=spooled,
            shared_index=shared_index)
        self.sharing = Sharing(ground)
        self.sessions = Sessions(ground, self.sharing)
        self.journals: Journals[Keeper] = Journals(ground, type(self))
        self.agent_threads = AgentThreads(ground, self.journals)
        self.catalog = Catalog(ground, self.sharing, self.journals, self.agent_threads)
        self.recovery = Recovery(ground, self.catalog, self.sessions, self.sharing,
                                 self.agent_threads)
        self.content = Content(ground, self.catalog, self.sessions)
        self.upkeep = Upkeep(ground)

    # ---- settings and what is open -----------------------------------------------------------

    def close(self) -> None:
        """Close the sessions it holds open, then its index and shared-index connections (their
        files released now, not at some later collection). It may be used again: what it needs
        is opened again then, as by a new Keeper. The journal stores' Keepers are closed too."""
        from contextlib import ExitStack

        with ExitStack() as closing:  # each part closes, whatever another raises
            closing.callback(self.sharing.close)
            closing.callback(self.journals.close)
            self.ground.close()

    def __enter__(self) -> Keeper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def store(self) -> Store:
        """The store, opened on first need."""
        return self.ground.store

    @property
    def client(self) -> ClientInfo:
        """Who records: given, or the Python API."""
        return self.ground.client

    @property
    def hooks(self) -> HookRegistry:
        """The hooks its sessions run."""
        return self.ground.hooks

    @property
    def live(self) -> OpenSessions:
        """The sessions this Keeper holds open, by thread id."""
        return self.ground.live

    @property
    def read_only(self) -> bool:
        """True when nothing on disk is created or changed."""
        return self.ground.read_only

    @property
    def durability(self) -> Durability:
        """How far a record is on disk when `record` returns."""
        return self.ground.durability

    @property
    def policy(self) -> SessionPolicy:
        """Redaction, snapshot and content settings of its sessions."""
        return self.ground.policy

    @property
    def reset_policy(self) -> ResetPolicy:
        """When a resumed thread starts afresh (idle, daily)."""
        return self.ground.reset_policy

    @property
    def allow_secret_files(self) -> bool:
        """True when secret-named files' content is kept too."""
        return self.ground.allow_secret_files

    @property
    def agent_sources(self) -> AgentSources | None:
        """The agents' logs read as threads (None: only our rollouts)."""
        return self.ground.agent_sources

    @property
    def spooled(self) -> bool:
        """True for a store of agent session journals (their tool hooks spool)."""
        return self.ground.spooled

    @property
    def shared(self) -> Shared | None:
        """The connection to the shared index (None: none configured)."""
        return self.sharing.shared

    @property
    def shared_problems(self) -> list[str]:
        """Why shared steps were skipped (the local store answered)."""
        return self.sharing.problems

    @property
    def baselines(self) -> BaselineCache | None:
        """A long-lived process's git cache for listings (None: none)."""
        return self.catalog.baselines

    @baselines.setter
    def baselines(self, cache: BaselineCache | None) -> None:
        self.catalog.baselines = cache

    @property
    def watching_agents(self) -> bool:
        """True while a surface watches the agents' roots (it calls `agents_changed`)."""
        return self.agent_threads.watching_agents

    @watching_agents.setter
    def watching_agents(self, watching: bool) -> None:
        self.agent_threads.watching_agents = watching

    @property
    def blobs(self) -> BlobStore:
        """The store's blobs."""
        return self.content.blobs

    # ---- sessions -----------------------------------------------------------------------------

    def start(self, workspace: str | os.PathLike[str], *, title: str | None = None,
              permissions: Permissions | dict[str, Any] | None = None,
              model: str | None = None, agent: str | None = None,
              thread_id: str | None = None, baseline: bool = True,
              lock: BaseFileLock | None = None, reason: str = "new thread") -> Session:
        """Start a new thread in `workspace` (`Sessions.start`)."""
        return self.sessions.start(workspace, title=title, permissions=permissions, model=model,
                                   agent=agent, thread_id=thread_id, baseline=baseline,
                                   lock=lock, reason=reason)

    def attach(self, session_id: str) -> Session:
        """Re-open the newest session of a thread to record more."""
        return self.sessions.attach(session_id)

    # ---- reading ------------------------------------------------------------------------------

    def rows(self, *, workspace: str | None = None, include_archived: bool = False,
             archived_only: bool = False, cursor: tuple[str, str] | None = None,
             limit: int = 50, agent: str | None = None, machine: str | None = None,
             progress: Progress | None = None) -> list[ThreadRow]:
        """Index rows of threads, newest first (`Catalog.rows`)."""
        return self.catalog.rows(workspace=workspace, include_archived=include_archived,
                                 archived_only=archived_only, cursor=cursor, limit=limit,
                                 agent=agent, machine=machine, progress=progress)

    def threads(self, *, workspace: str | None = None, include_archived: bool = False,
                archived_only: bool = False, cursor: tuple[str, str] | None = None,
                limit: int = 50, agent: str | None = None, machine: str | None = None,
                progress: Progress | None = None) -> list[ThreadSummary]:
        """Thread summaries with an estimated resume state (`Catalog.threads`)."""
        return self.catalog.threads(workspace=workspace, include_archived=include_archived,
                                    archived_only=archived_only, cursor=cursor, limit=limit,
                                    agent=agent, machine=machine, progress=progress)

    def replay(self, thread_id: str, *, full: bool = False) -> Replayed:
        """A thread's state rebuilt from its rollouts (`Catalog.replay`)."""
        return self.catalog.replay(thread_id, full=full)

    def thread_sessions(self, thread_id: str) -> list[SessionRow]:
        """The session rows of a thread, oldest first."""
        return self.catalog.thread_sessions(thread_id)

    # ---- resuming -----------------------------------------------------------------------------

    def check_resume(self, thread_id: str | None, *, workspace: str, latest: bool = False,
                     requested: dict[str, Any] | None = None) -> Report:
        """Dry run of a resume: the report, nothing changed on disk."""
        return self.recovery.check_resume(thread_id, workspace=workspace, latest=latest,
                                          requested=requested)

    def resume(self, thread_id: str | None, *, workspace: str, decision: Decision | None = None,
               latest: bool = False,
               requested: dict[str, Any] | None = None) -> tuple[Report, Session | None]:
        """Resume for real: the report, and the new session (None when nothing continues)."""
        return self.recovery.resume(thread_id, workspace=workspace, decision=decision,
                                    latest=latest, requested=requested)

    def fork(self, thread_id: str, *, at_seq: int | None = None,
             workspace: str | None = None) -> Session:
        """Start a new thread from a thread's state as of `at_seq` (default: its latest seq)."""
        return self.recovery.fork(thread_id, at_seq=at_seq, workspace=workspace)

    # ---- the agents' threads and journals ------------------------------------------------------

    def import_agents(self, progress: Progress | None = None, *,
                      force: bool = False) -> ImportCounts | None:
        """Import what changed in the agents' files (`AgentThreads.import_agents`)."""
        return self.agent_threads.import_agents(progress, force=force)

    def agents_changed(self) -> None:
        """The agents' roots changed (a watcher saw it): the next listing imports again."""
        self.agent_threads.agents_changed()

    def is_agent_thread(self, thread_id: str) -> bool:
        """True for a thread read from an agent's own files."""
        return self.agent_threads.is_agent_thread(thread_id)

    def replay_agent(self, thread_id: str) -> Replayed:
        """An agent thread rebuilt from its file and its hook journal."""
        return self.agent_threads.replay_agent(thread_id)

    def check_agent(self, thread_id: str, *, workspace: str,
                    requested: dict[str, Any] | None = None) -> Report:
        """The resume report of an agent thread here (nothing changes anywhere)."""
        return self.agent_threads.check_agent(thread_id, workspace=workspace, requested=requested)

    def resume_agent(self, thread_id: str, *, workspace: str, decision: Decision | None = None,
                     requested: dict[str, Any] | None = None
                     ) -> tuple[Report, AgentCommand | None]:
        """Check, then the agent's own command to run (None when nothing may continue)."""
        return self.agent_threads.resume_agent(thread_id, workspace=workspace, decision=decision,
                                               requested=requested)

    def journal_keeper(self, agent: str) -> Keeper:
        """The Keeper of `agent`'s journal store."""
        return self.journals.journal_keeper(agent)

    def journal(self, agent: str, agent_session_id: str, *,
                workspace: str | os.PathLike[str] | None = None, wait_s: float = WAIT_S) -> Session:
        """The writable journal of an agent session (`Journals.journal`)."""
        return self.journals.journal(agent, agent_session_id, workspace=workspace, wait_s=wait_s)

    def journal_rollouts(self, agent: str, agent_session_id: str) -> list[Rollout]:
        """Every rollout of an agent session's journal, with its spooled tool calls."""
        return self.journals.journal_rollouts(agent, agent_session_id)

    def journaled(self, rows: Iterable[ThreadRow]) -> set[str]:
        """The agent threads among `rows` that have a hook journal."""
        return self.journals.journaled(rows)

    def read_journal(self, agent: str, agent_session_id: str) -> Replayed | None:
        """An agent session's journal folded on its own, or None when there is none."""
        return self.journals.read_journal(agent, agent_session_id)

    # ---- content ------------------------------------------------------------------------------

    def diff(self, thread_id: str, *, from_seq: int | None = None, to_seq: int | None = None,
             path: str | None = None, squash: bool = False) -> list[FileDiff]:
        """Unified diffs of a thread's file versions (`Content.diff`)."""
        return self.content.diff(thread_id, from_seq=from_seq, to_seq=to_seq, path=path,
                                 squash=squash)

    def blob(self, thread_id: str, key: str) -> bytes:
        """The content of a file version the thread's history names."""
        return self.content.blob(thread_id, key)

    def rewind(self, thread_id: str, *, to_seq: int | None = None,
               paths: Sequence[str] | None = None, dry_run: bool = False, force: bool = False,
               undo: bool = False) -> RewindReport:
        """Restore a thread's files to their versions at `to_seq` (or undo the latest rewind)."""
        return self.content.rewind(thread_id, to_seq=to_seq, paths=paths, dry_run=dry_run,
                                   force=force, undo=undo)

    def trailers(self, thread_id: str, *, coauthor: str | None = None) -> tuple[str, str]:
        """The commit trailers of a thread (`Content.trailers`)."""
        return self.content.trailers(thread_id, coauthor=coauthor)

    def trail_commit(self, message_file: str, *, workspace: str, thread_id: str | None = None,
                     coauthor: str | None = None) -> tuple[str, ...]:
        """Add the trailers to a commit message (`Content.trail_commit`)."""
        return self.content.trail_commit(message_file, workspace=workspace, thread_id=thread_id,
                                         coauthor=coauthor)

    def gc(self, *, cap_bytes: int | None = None, dry_run: bool = False,
           min_age_s: float = 3600.0) -> GcReport:
        """Remove blobs no rollout names; over the cap, the least recently used unprotected ones."""
        return self.content.gc(cap_bytes=cap_bytes, dry_run=dry_run, min_age_s=min_age_s)

    # ---- sharing and upkeep -------------------------------------------------------------------

    def sync(self, *, thread_id: str | None = None) -> PushReport:
        """Push the store's sessions (of one thread) and blobs to the shared server."""
        return self.sharing.sync(thread_id=thread_id)

    def pull(self, thread_id: str) -> PullReport | None:
        """Fetch what other machines recorded of a thread (None: no shared index, or unreachable)."""
        return self.sharing.pull(thread_id)

    def archive(self, thread_id: str) -> int:
        """Move a thread's rollouts to archived_sessions/; returns files moved."""
        return self.upkeep.archive(thread_id)

    def unarchive(self, thread_id: str) -> int:
        """Move a thread's rollouts back to sessions/; returns files moved."""
        return self.upkeep.unarchive(thread_id)

    def delete(self, thread_id: str) -> int:
        """Delete a thread for good; returns rollouts removed (`Upkeep.delete`)."""
        return self.upkeep.delete(thread_id)

    def fsck(self, *, repair: bool = False) -> FsckReport:
        """Compare the index with the rollouts; with `repair`, fix what can be fixed."""
        return self.upkeep.fsck(repair=repair)

    def reindex(self, progress: Progress | None = None) -> dict[str, int]:
        """Rebuild the index from the rollouts."""
        return self.upkeep.reindex(progress)
