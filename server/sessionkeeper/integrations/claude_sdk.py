"""Claude Agent SDK session store on Session Keeper: `SessionKeeperSessionStore`.

    store = SessionKeeperSessionStore("/path/to/store")
    options = ClaudeAgentOptions(session_store=store)

Each transcript — a main one (project_key, session_id) or a subagent's (…, subpath) — is one
Session Keeper thread (agent `claude-sdk`) whose id is a uuid5 of the SDK's keys, which are never
part of a path. A project is a private directory under the store, named by the uuid5 of its key:
its main transcripts run there (their title is the SDK's session id), a session's subagent
transcripts in a directory below it (titled by subpath), so listing is an index query.

Invariants: entries are appended in call order, one record per call (one write), with the SDK's
folded summary of the main transcript in the same record; an entry whose `uuid` was appended
before is not appended again (entries without one always are); `load` returns the entries in
order, deep-equal to what was appended — except credentials, which redaction (on by default,
`Keeper(redact=False)` to keep them) replaced before they reached disk; the `mtime` of a session
and of its summary are both the modification time of its newest rollout (one clock: storage).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from claude_agent_sdk import fold_session_summary
from claude_agent_sdk.types import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
)

from ..api import Keeper
from ..errors import InvalidId
from ..events import Durability
from ..recovery.subsystems.transcripts import Transcripts
from ..session.live import Session
from ..store.index import ThreadRow
from ..store.layout import ensure_private_dir
from .live import LiveThreads, framework_thread_id, keeper_of

AGENT = "claude-sdk"
_SEEN_CACHE = 64


def _keys(key: SessionKey | SessionListSubkeysKey) -> tuple[str, str, str | None]:
    """(project_key, session_id, subpath) of an SDK key, checked."""
    project, session = key.get("project_key"), key.get("session_id")
    subpath = key.get("subpath")
    if not isinstance(project, str) or not isinstance(session, str) or not session:
        raise InvalidId(f"a session key needs string project_key and session_id: {key!r}")
    if subpath is not None and (not isinstance(subpath, str) or not subpath):
        raise InvalidId("subpath must be a non-empty string (omit it for the main transcript)")
    return project, session, subpath


class SessionKeeperSessionStore(SessionStore):
    """Transcripts of Claude Agent SDK sessions, in a Session Keeper store."""

    def __init__(self, store: Keeper | Path | str | None = None, *,
                 durability: Durability | str | None = None, max_open: int = 64) -> None:
        self.keeper = keeper_of(store)
        self.owns_keeper = self.keeper is not store  # made here from a path: closed with the store
        self.durability = Durability(durability or self.keeper.durability)
        self.live = LiveThreads(self.keeper, max_open=max_open)
        self._seen: OrderedDict[str, set[str]] = OrderedDict()  # thread -> entry uuids appended
        self._seen_guard = threading.Lock()

    def close(self) -> None:
        """Close every session this store holds open, and the Keeper it made (`owns_keeper`; one
        given stays the caller's to close)."""
        self.live.close_all()
        if self.owns_keeper:
            self.keeper.close()

    # ---- where things are -------------------------------------------------------------------

    def thread_id(self, key: SessionKey) -> str:
        """The Session Keeper thread id of an SDK key (what `sessionkeeper list` shows)."""
        project, session, subpath = _keys(key)
        parts = (project, session) if subpath is None else (project, session, subpath)
        return framework_thread_id(AGENT, *parts)

    def _project_dir(self, project: str) -> Path:
        root = self.keeper.store.layout.root
        return root / "integrations" / AGENT / framework_thread_id(AGENT, project)

    def _subagent_dir(self, project: str, session: str) -> Path:
        return self._project_dir(project) / framework_thread_id(AGENT, project, session)

    def _workspace(self, project: str, session: str, subpath: str | None) -> Path:
        folder = self._project_dir(project) if subpath is None \
            else self._subagent_dir(project, session)
        return ensure_private_dir(folder, within=self.keeper.store.layout.root)

    # ---- the sync core ----------------------------------------------------------------------

    def append_sync(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Append entries (one record, one write); a `uuid` seen before is not appended again."""
        if not entries:
            return
        project, session, subpath = _keys(key)
        sk = self.thread_id(key)
        with self.live.writing(sk, start=lambda: self._start(sk, project, session, subpath),
                               continue_old=self._continue) as live:
            seen = self._uuids(sk)
            fresh: list[SessionStoreEntry] = []
            for entry in entries:
                uid = entry.get("uuid") if isinstance(entry, dict) else None
                if isinstance(uid, str) and uid in seen:
                    continue
                fresh.append(entry)
                if isinstance(uid, str):
                    seen.add(uid)
            if not fresh:
                return
            record: dict[str, Any] = {"type": "transcript", "project": project,
                                      "session": session, "entries": fresh}
            if subpath is not None:
                record["subpath"] = subpath
            else:
                prev = live.state.get(Transcripts).summary_data()
                before: SessionSummaryEntry | None = None if prev is None else {
                    "session_id": session, "mtime": 0, "data": prev}
                record["summary"] = fold_session_summary(before, key, fresh)["data"]
            live.record(record, durability=self.durability)

    def _start(self, sk: str, project: str, session: str, subpath: str | None) -> Session:
        return self.keeper.start(self._workspace(project, session, subpath),
                                 title=subpath or session, agent=AGENT, thread_id=sk,
                                 baseline=False)

    def _continue(self, row: ThreadRow) -> Session:
        if row.latest_session is None:
            raise InvalidId(f"thread {row.thread_id} has no session to continue")
        session = self.keeper.attach(row.latest_session)
        session.transition("resume", "claude-sdk: a new process appends to the transcript")
        return session

    def _uuids(self, sk: str) -> set[str]:
        """The uuids of a thread's entries (read from its log once, then kept up to date)."""
        with self._seen_guard:
            seen = self._seen.get(sk)
            if seen is not None:
                self._seen.move_to_end(sk)
                return seen
        entries = self._entries(sk) or []
        seen = {e["uuid"] for e in entries if isinstance(e.get("uuid"), str)}
        with self._seen_guard:
            self._seen[sk] = seen
            while len(self._seen) > _SEEN_CACHE:
                self._seen.popitem(last=False)
        return seen

    def _entries(self, sk: str) -> list[SessionStoreEntry] | None:
        """A transcript's entries in append order (None: never written)."""
        with self.live.lock(sk):
            session = self.live.session(sk)
            if session is not None and self.durability is Durability.NONE:
                session.flush()
            if self.keeper.store.thread_row(sk) is None:
                return None
            rollouts = self.keeper.store.read_thread(sk, full=True)
        out: list[SessionStoreEntry] = []
        seen: set[str] = set()
        for rollout in rollouts:
            for record in rollout.records:
                if record.get("type") != "transcript":
                    continue
                for entry in record.get("entries") or []:
                    uid = entry.get("uuid")
                    if isinstance(uid, str):
                        if uid in seen:
                            continue
                        seen.add(uid)
                    out.append(entry)
        return out

    def load_sync(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Every entry of a transcript in order, or None when it was never written."""
        return self._entries(self.thread_id(key))

    def _rows(self, folder: Path) -> list[ThreadRow]:
        rows: list[ThreadRow] = []
        cursor: tuple[str, str] | None = None
        while True:
            page = self.keeper.rows(workspace=str(folder), include_archived=True, cursor=cursor,
                                    limit=1000)
            rows += [r for r in page if r.agent == AGENT]
            if len(page) < 1000:
                return rows
            cursor = (page[-1].last_activity or "", page[-1].thread_id)

    def list_sessions_sync(self, project_key: str) -> list[SessionStoreListEntry]:
        """The main transcripts of a project with their last activity (epoch ms)."""
        return [{"session_id": r.title or "", "mtime": self._mtime(r)}
                for r in self._rows(self._project_dir(project_key))]

    def _mtime(self, row: ThreadRow) -> int:
        """When the thread's newest rollout was last written, in epoch milliseconds."""
        if row.latest_session is None:
            return 0
        path = self.keeper.store.session_path(row.latest_session)
        return os.stat(path).st_mtime_ns // 1_000_000

    def list_session_summaries_sync(self, project_key: str) -> list[SessionSummaryEntry]:
        """The SDK's folded summary of each main transcript of a project."""
        out: list[SessionSummaryEntry] = []
        for row in self._rows(self._project_dir(project_key)):
            with self.live.lock(row.thread_id):
                session = self.live.session(row.thread_id)
                state = session.state if session is not None \
                    else self.keeper.replay(row.thread_id).state
                data = state.get(Transcripts).summary_data()
            if data is not None:
                out.append({"session_id": row.title or "", "mtime": self._mtime(row),
                            "data": data})
        return out

    def delete_sync(self, key: SessionKey) -> None:
        """Delete a transcript for good; a main one takes its subagent transcripts with it."""
        project, session, subpath = _keys(key)
        doomed = [self.thread_id(key)]
        if subpath is None:
            doomed += [r.thread_id for r in self._rows(self._subagent_dir(project, session))]
        for sk in doomed:
            with self.live.lock(sk):
                self.live.forget(sk)
                with self._seen_guard:
                    self._seen.pop(sk, None)
                self.keeper.delete(sk)
        if subpath is None:
            folder = self._subagent_dir(project, session)
            if folder.is_dir() and not any(folder.iterdir()):
                os.rmdir(folder)

    def list_subkeys_sync(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths of a session's subagent transcripts."""
        project, session, _ = _keys(key)
        return [r.title or "" for r in self._rows(self._subagent_dir(project, session))]

    # ---- the SDK's async protocol -----------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Mirror a batch of transcript entries."""
        await asyncio.to_thread(self.append_sync, key, entries)

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Load a full transcript for resume."""
        return await asyncio.to_thread(self.load_sync, key)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """List the sessions of a project with their mtimes."""
        return await asyncio.to_thread(self.list_sessions_sync, project_key)

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The summaries of a project's sessions, in one call."""
        return await asyncio.to_thread(self.list_session_summaries_sync, project_key)

    async def delete(self, key: SessionKey) -> None:
        """Delete a session (a main key cascades to its subkeys)."""
        await asyncio.to_thread(self.delete_sync, key)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """List the subpaths under a session."""
        return await asyncio.to_thread(self.list_subkeys_sync, key)
