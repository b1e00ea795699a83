"""The Keeper's agent threads: Codex and Claude Code sessions imported, checked, resumed by the agent.

Import is lazy: never when a Keeper is made, only when threads are listed (or an id is not found),
then again when something changed — at most once a second, or, while a surface watches the
agents' roots (`watching_agents`), only after it said they changed (`agents_changed`).
A check reads the agent's file afresh, redacts it, merges the hook journal when there is one
(`recovery.sources`), gives the recorded baseline the repository identity the index remembered
for the session's cwd, and assesses it like any thread. A resume never starts a session of ours:
it answers with the agent's own command, and only when the plan lets the thread continue.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import AgentLogUnreadable, IndexBusy, InvalidEvent, UnknownThread
from ..store.index import SUBAGENT, FileCheckpoint, SessionRow
from .assessing import assess_here

if TYPE_CHECKING:
    from ..agents.base import AgentFile
    from ..agents.importer import ImportCounts, Stamps
    from ..recovery.replay import Replayed
    from ..recovery.report import AgentCommand, Report
    from ..recovery.verdicts import Decision
    from ..store.catalog import Progress
    from ..store.reader import Rollout
    from .ground import Ground
    from .journals import Journals

FRESH_S = 1.0
"""Without a watcher, listings within this long of an import reuse it."""
IDENTITY_SOURCE = "Session Keeper's index: the repository found at the session's cwd when imported"


class AgentThreads:
    """The threads read from the agents' own files: imported, replayed, checked, resumed."""

    def __init__(self, ground: Ground, journals: Journals[Any]) -> None:
        """`journals`: the hook journals merged into an agent thread when it is read."""
        self.ground = ground
        self.journals = journals
        self.watching_agents = False  # a surface watches the agents' roots (`agents_changed`)
        self._agents_at: float | None = None  # monotonic time of the last import (None: never)
        self._agents_changes = 0  # how many times agents_changed() was called (a watcher thread)
        self._stamps: Stamps | None = None

    # ---- importing ------------------------------------------------------------------------------

    def agents_changed(self) -> None:
        """The agents' roots changed (a watcher saw it): the next listing imports again."""
        self._agents_at = None
        self._agents_changes += 1

    def import_agents(self, progress: Progress | None = None, *,
                      force: bool = False) -> ImportCounts | None:
        """Import what changed in the agents' files (None: no sources, or nothing can have changed).

        `progress(done, total)` is called when files are read (first with done 0).
        """
        if self.ground.agent_sources is None:
            return None
        if not force and self._agents_at is not None and (
                self.watching_agents or time.monotonic() - self._agents_at < FRESH_S):
            return None
        from ..agents.importer import Stamps, import_agents

        sources = self.ground.agent_sources
        stamps = self._stamps = self._stamps or Stamps()
        changes = self._agents_changes
        try:
            counts = self.ground.store.with_index(lambda index: import_agents(
                index, sources, progress=progress, stamps=stamps))
        except IndexBusy:
            return None  # another process writes the index: the next listing goes on
        # a change reported while this import ran may have come after its file was read
        self._agents_at = time.monotonic() if self._agents_changes == changes else None
        return counts

    def agent_filter(self) -> tuple[str, ...]:
        """The agents whose imported threads a listing shows (none without sources)."""
        sources = self.ground.agent_sources
        return () if sources is None else tuple(sources.enabled())

    # ---- finding a thread's files ----------------------------------------------------------------

    def agent_sessions(self, thread_id: str) -> list[tuple[SessionRow, FileCheckpoint]]:
        """The imported session rows of a thread with their files ([]: not an agent thread).

        An id the index does not know makes the agents be imported first (it may be a new one);
        when a file named after it could not be read then, its AgentLogUnreadable is raised.
        An agent's own id that is not a UUID (Hermes's) names the thread derived from it.
        """
        thread_id = agent_thread_id(thread_id)
        store = self.ground.store
        found = store.imported_sessions(thread_id)
        if not found and self.ground.agent_sources is not None \
                and store.thread_row(thread_id) is None:
            counts = self.import_agents(force=True)
            found = store.imported_sessions(thread_id)
            if not found and counts is not None:
                _raise_if_its_file_is_unreadable(thread_id, counts.problems)
        return found

    def is_agent_thread(self, thread_id: str) -> bool:
        """True for a thread read from an agent's own files."""
        return bool(self.agent_sessions(thread_id))

    def _main(self, thread_id: str) -> tuple[SessionRow, FileCheckpoint,
                                             list[tuple[SessionRow, FileCheckpoint]]]:
        found = self.agent_sessions(thread_id)
        main = [(r, f) for r, f in found if r.source != SUBAGENT]
        if not main:
            raise UnknownThread(f"no agent session {thread_id} (only sub-agent transcripts of it)"
                                if found else f"no thread {thread_id}")
        row, file = main[-1]
        return row, file, [(r, f) for r, f in found if r.source == SUBAGENT]

    # ---- checking ---------------------------------------------------------------------------

    def replay_agent(self, thread_id: str) -> Replayed:
        """An agent thread rebuilt from its file (read now, redacted) and its hook journal."""
        from .. import agents
        from ..recovery.sources import replay_with_journal

        row, file, _ = self._main(thread_id)
        agent = agents.get(file.agent)
        try:
            log = agent.load(_file_of(file))
        except AgentLogUnreadable:
            self.import_agents(force=True)  # moved (archived), or gone: the index learns it
            row, file, _ = self._main(thread_id)
            log = agent.load(_file_of(file))
        log = _redacted(log)
        journal = self.journals.journal_rollouts(file.agent, row.thread_id)
        replayed = replay_with_journal(log, journal, agent=file.agent)
        return _with_identity(replayed, (row.summary or {}).get("identity"), agent=file.agent)

    def check_agent(self, thread_id: str, *, workspace: str,
                    requested: dict[str, Any] | None = None) -> Report:
        """The resume report of an agent thread here (nothing changes anywhere)."""
        thread_id = agent_thread_id(thread_id)
        replayed = self.replay_agent(thread_id)
        report = assess_here(thread_id, replayed, workspace=workspace, requested=requested)
        return dataclasses.replace(report, notes=report.notes + self._agent_notes(thread_id,
                                                                                  replayed))

    def _agent_notes(self, thread_id: str, replayed: Replayed) -> list[str]:
        notes = []
        _, _, subagents = self._main(thread_id)
        doubt = sum(int(((r.summary or {}).get("agent") or {}).get("in_doubt") or 0)
                    for r, _ in subagents)
        if subagents:
            notes.append(f"{len(subagents)} sub-agent transcript(s) belong to this thread"
                         + (f"; {doubt} of their tool call(s) never finished" if doubt else ""))
        from .. import agents

        _, file, _ = self._main(thread_id)
        notes += agents.get(file.agent).check_notes(replayed.meta)
        agent = (replayed.meta.get("data") or {}).get("agent")
        said = agent.get("notes") if isinstance(agent, dict) else None  # the agent's lifecycle facts
        notes += [n for n in said if isinstance(n, str)] if isinstance(said, list) else []
        journal = (replayed.meta.get("data") or {}).get("journal")
        if isinstance(journal, dict) and (journal.get("damaged_lines") or journal.get("torn_tail")):
            notes.append("the hook journal of this session is damaged "
                         f"(lines {journal.get('damaged_lines')}); its facts may be incomplete")
        return notes

    # ---- resuming through the agent -------------------------------------------------------------

    def resume_agent(self, thread_id: str, *, workspace: str, decision: Decision | None = None,
                     requested: dict[str, Any] | None = None
                     ) -> tuple[Report, AgentCommand | None]:
        """Check, then the agent's own command to run (None when nothing may continue).

        Never on `blocked` (a relocation checks again where the repository now is), on `drift`
        only with a decision; `fork` gives the agent's fork command. Nothing of ours is written.
        """
        from .. import agents
        from ..recovery.verdicts import DECISIONS

        thread_id = agent_thread_id(thread_id)
        if decision is not None and decision not in DECISIONS:
            raise InvalidEvent(f"unknown decision {decision!r}: expected one of {list(DECISIONS)}")
        report = self.check_agent(thread_id, workspace=workspace, requested=requested)
        from ..recovery.plan import plan

        action = plan(report, decision)
        if action.kind == "relocate" and action.workspace:
            return self.resume_agent(thread_id, workspace=action.workspace, decision="relocate",
                                     requested=requested)
        report = dataclasses.replace(report, decision=decision)
        _, file, _ = self._main(thread_id)
        agent = agents.get(file.agent)
        if action.kind == "export":
            replayed = self.replay_agent(thread_id)
            path = self.ground.store.write_export(thread_id, {"meta": replayed.meta,
                                                       "state": replayed.state.snapshot(),
                                                       "report": report.to_json()})
            return dataclasses.replace(report, export_path=str(path)), None
        argv = (agent.command_for(action.kind, thread_id, _file_of(file))
                if action.kind in ("continue", "fork") else None)
        if argv is None:
            return report, None
        cwd = report.workspace
        import shlex

        from ..recovery.report import AgentCommand

        return report, AgentCommand(argv=list(argv), cwd=cwd, display=shlex.join(argv))


def agent_thread_id(raw: str) -> str:
    """`raw` itself when it is a UUID, else the thread an agent derives from an id of its own."""
    from ..agents.base import canonical_uuid

    if canonical_uuid(raw) is not None:
        return raw
    from .. import agents

    for name in agents.names():
        derived = agents.get(name).thread_id_of(raw)
        if derived is not None:
            return derived
    return raw


def _raise_if_its_file_is_unreadable(thread_id: str,
                                     problems: Mapping[str, AgentLogUnreadable]) -> None:
    """Raise the AgentLogUnreadable of a file named after the thread: each agent names a session's
    file by its id (Codex `rollout-<time>-<id>.jsonl[.zst]`, Claude Code `<id>.jsonl`, an OpenClaw window
    `<store>#<id>`); failing that, the error of a whole store that could not be listed."""
    from ..agents.base import canonical_uuid

    wanted = canonical_uuid(thread_id)
    if wanted is None:
        return
    for path, error in problems.items():
        if os.path.basename(path).removesuffix(".zst").removesuffix(".jsonl").endswith(wanted):
            raise AgentLogUnreadable(str(error))
    for path, error in problems.items():  # a store none of whose sessions could be listed (OpenClaw)
        if path.endswith("#"):
            raise AgentLogUnreadable(f"no thread {thread_id} among the sessions read, and a "
                                     f"session store could not be read: {error}")


def _file_of(file: FileCheckpoint) -> AgentFile:
    """The reader's AgentFile of an imported file."""
    from pathlib import Path

    from ..agents.base import AgentFile

    return AgentFile(file.agent, file.kind, Path(file.path), Path(file.root),
                     archived=file.archived, parent=file.parent,
                     companions=tuple(Path(c[0]) for c in file.companions))


def _redacted(log: Rollout) -> Rollout:
    """An agent's rollout with credentials redacted from every record (before any report)."""
    from ..redact import redact_value

    meta = redact_value(log.meta) if log.meta is not None else None
    return dataclasses.replace(log, meta=meta, records=redact_value(log.records))


FIRST_SEEN_SOURCE = ("the workspace's branch and HEAD when Session Keeper first imported the "
                     "session (the agent's log records no git state)")


def _records_git(agent: str) -> bool:
    from .. import agents

    try:
        return agents.get(agent).records_git
    except KeyError:
        return True


def _first_seen_baseline(replayed: Replayed, identity: dict[str, Any], worktree: Any,
                         state: dict[str, Any]) -> Replayed:
    """The baseline of a log without git: the repository at its cwd when the index first read it."""
    cwd = replayed.meta.get("cwd")
    if not identity.get("root_commits") or not isinstance(cwd, str) or not cwd \
            or os.path.realpath(str(identity.get("cwd"))) != os.path.realpath(cwd):
        return replayed
    state["baseline"] = {"repo_root": identity.get("repo_root") or cwd,
                         "worktree": identity.get("worktree") or cwd,
                         "identity": {"root_commits": list(identity["root_commits"]),
                                      "remote_url": identity.get("remote_url")},
                         "branch": identity.get("branch"), "head": identity.get("head")}
    worktree.restore(state)
    data = dict(replayed.meta.get("data") or {})
    facts = dict(data.get("facts") or {})
    facts["git"] = {"source": FIRST_SEEN_SOURCE, "as_of": identity.get("as_of"), "origin": "index",
                    "exact": False}
    data["facts"] = facts
    replayed.meta = {**replayed.meta, "data": data}
    return replayed


def _with_identity(replayed: Replayed, identity: object, *, agent: str) -> Replayed:
    """The recorded baseline with the repository identity the index remembered for its cwd.

    Only when the baseline names no root commit (an agent's log never does; our journal does),
    the identity was found where the baseline was taken (not a later cwd) and its origin is
    not another one than the log's (Codex records the origin URL); the baseline's paths become
    the repository's. A Claude baseline without a branch (gitBranch "HEAD": a detached HEAD, or
    no repository at all) is dropped when the index found that folder in no repository, and so is
    a Hermes one (the classic CLI records the cwd only).
    """
    from ..recovery.subsystems.worktree import Worktree

    if not isinstance(identity, dict):
        return replayed
    worktree = replayed.state.get(Worktree)
    state = worktree.snapshot()
    baseline = state.get("baseline")
    if baseline is None and not _records_git(agent):
        return _first_seen_baseline(replayed, identity, worktree, state)
    if not isinstance(baseline, dict):
        return replayed
    # where the baseline was taken (Codex: where the thread was created; its cwd may be later)
    cwd = baseline.get("worktree") or baseline.get("repo_root")
    if not isinstance(cwd, str) or not cwd:
        return replayed
    if (baseline.get("identity") or {}).get("root_commits"):
        return replayed
    if os.path.realpath(str(identity.get("cwd"))) != os.path.realpath(cwd):
        return replayed
    if identity.get("outside_git") is True:
        if agent in ("claude", "hermes") and baseline.get("branch") is None \
                and baseline.get("head") is None:
            state["baseline"] = None
            worktree.restore(state)
        return replayed
    if not identity.get("root_commits"):
        return replayed
    known = baseline.get("identity") or {}
    if _other_remote(known.get("remote_url"), identity.get("remote_url")):
        return replayed  # the folder held another repository when it was imported: the log's word
    baseline["identity"] = {"root_commits": list(identity["root_commits"]),
                            "remote_url": known.get("remote_url") or identity.get("remote_url")}
    for key in ("repo_root", "worktree"):
        if identity.get(key):
            baseline[key] = identity[key]
    worktree.restore(state)
    data = dict(replayed.meta.get("data") or {})
    facts = dict(data.get("facts") or {})
    facts["identity"] = {"source": IDENTITY_SOURCE, "as_of": identity.get("as_of"),
                         "origin": "index", "exact": True}
    data["facts"] = facts
    replayed.meta = {**replayed.meta, "data": data}
    return replayed


def _other_remote(recorded: object, found: object) -> bool:
    """True when the log's origin URL and the one found at import time name different remotes."""
    if not isinstance(recorded, str) or not isinstance(found, str) or not recorded or not found:
        return False
    from ..events import RepoIdentity
    from ..recovery.comparison import same_repository

    return same_repository(RepoIdentity(root_commits=[], remote_url=recorded),
                           RepoIdentity(root_commits=[], remote_url=found)) is False
