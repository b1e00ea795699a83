"""Importing the agents' session files into the index: incremental, redacted, with progress.

One pass (`import_agents`): every file under an enabled agent's roots is stat'ed against the
checkpoint the index keeps for it (`Agent.changes`); only changed files are read, each from its
checkpoint (just the appended bytes while it still matches); a read becomes at most one session
row — its thread is the agent's own session id, a sub-agent transcript is a session of its
parent's thread — stored with the file's new checkpoint in one index transaction per batch, so an
interrupted pass leaves every file imported or still to be read. Files that are gone, and files of
an agent under roots no longer configured for it, are forgotten with their rows. Every text that
reaches the index (titles, paths, branches, the reader's state) is redacted first.

Invariant: nothing is ever written under an agent's root (the reader opens files O_RDONLY).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from ..errors import GitRefused, InvalidId
from ..store.index import SUBAGENT, FileCheckpoint, Index, SessionRow
from . import get, names
from .base import AgentFile, AgentLogUnreadable

if TYPE_CHECKING:
    from .reads import Checkpoint, Read

Progress = Callable[[int, int], None]
BATCH = 100
"""Files per index transaction."""
_VERSION = 1  # of the checkpoint text this module writes around the reader's checkpoint


@dataclass(frozen=True, kw_only=True)
class AgentSources:
    """Which agents' logs are imported, and from where (their env/default roots unless given)."""

    agents: tuple[str, ...] | None = None
    """The agents to import (None: every known one; (): none)."""
    roots: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per agent, the roots to read instead of its env/default ones."""

    def __post_init__(self) -> None:
        known = names()
        for name in [*(self.agents or ()), *self.roots]:
            if name not in known:
                raise InvalidId(f"unknown agent {name!r}: expected one of {known}")

    def enabled(self) -> list[str]:
        """The names of the agents imported."""
        return names() if self.agents is None else [n for n in names() if n in self.agents]

    def roots_of(self, agent: str) -> list[Path]:
        """The roots of one agent (given, else its environment's or defaults)."""
        given = self.roots.get(agent)
        if given is not None:
            return [Path(os.path.expanduser(r)) for r in given]
        return get(agent).default_roots()


@dataclass
class ImportCounts:
    """What one import pass did."""

    files: int = 0  # files listed under the roots
    read: int = 0  # files read whole
    appended: int = 0  # files of which only appended bytes were read
    unchanged: int = 0  # files whose stat matched (not opened)
    gone: int = 0  # files forgotten (deleted, or under roots no longer configured)
    unreadable: int = 0  # files that could not be read (each logged; the others go on)
    problems: dict[str, AgentLogUnreadable] = field(default_factory=dict)  # path -> why (of those)
    threads: int = 0  # session rows written
    busy: bool = False  # the index was busy: the pass stopped, the next one goes on


class Stamps:
    """The index's file stamps kept between passes of one process (a listing then reads none of
    them from the index), trusted only while the index's `files_token` says nobody else wrote."""

    def __init__(self) -> None:
        self.token: object = None
        self.by_agent: dict[str, dict[str, FileCheckpoint]] = {}

    def of(self, index: Index, agent: str) -> dict[str, FileCheckpoint]:
        """path -> stamp of `agent`'s imported files (read from the index when not current)."""
        token = index.files_token()
        if token != self.token:
            self.by_agent, self.token = {}, token
        if agent not in self.by_agent:
            self.by_agent[agent] = {f.path: f for f in index.agent_files(agent=agent)}
        return self.by_agent[agent]

    def wrote(self, index: Index, agent: str, files: Sequence[FileCheckpoint],
              gone: Sequence[str]) -> None:
        """Take what this process just wrote (the token after it is ours)."""
        known = self.by_agent.setdefault(agent, {})
        for path in gone:
            known.pop(path, None)
        known.update({f.path: dataclasses.replace(f, checkpoint=None) for f in files})
        self.token = index.files_token()


def import_agents(index: Index, sources: AgentSources, *, progress: Progress | None = None,
                  stamps: Stamps | None = None) -> ImportCounts:
    """Bring the index up to date with the agents' files (see the module docstring)."""
    counts = ImportCounts()
    stamps = stamps if stamps is not None else Stamps()
    plans: list[tuple[str, list[AgentFile], list[str], dict[str, FileCheckpoint]]] = []
    for name in sources.enabled():
        roots = sources.roots_of(name)
        known = stamps.of(index, name)
        changes = get(name).changes(roots, checkpoints=known)
        here = {str(r) for r in roots}
        gone = changes.gone + [p for p, f in known.items() if f.root not in here]
        counts.files += len(changes.changed) + len(changes.unchanged)
        counts.unchanged += len(changes.unchanged)
        plans.append((name, changes.changed, gone, known))
    total = sum(len(changed) for _, changed, _, _ in plans)
    done = 0
    if progress is not None and total:
        progress(0, total)
    identities = Identities()
    for name, changed, gone, known in plans:
        for start in range(0, len(changed), BATCH):
            batch = changed[start:start + BATCH]
            files, rows = [], []
            stored = [_stored(index, file, known=str(file.path) in known) for file in batch]
            reads = get(name).read_many([(f, b.checkpoint) for f, b in zip(batch, stored, strict=True)])
            for file, before, first in zip(batch, stored, reads, strict=True):
                imported = _import_one(name, file, before, first, identities, counts)
                if imported is not None:
                    files.append(imported[0])
                    rows += imported[1]
            now_gone = gone if start + BATCH >= len(changed) else []
            index.import_files(files, rows, gone=now_gone)
            stamps.wrote(index, name, files, now_gone)
            counts.threads += len(rows)
            done += len(batch)
            if progress is not None:
                progress(done, total)
        if not changed and gone:
            index.import_files([], [], gone=gone)
            stamps.wrote(index, name, [], gone)
        counts.gone += len(gone)
    return counts


def _stored(index: Index, file: AgentFile, *, known: bool) -> _Stored:
    """What the index kept of one file (`known`: it has a row for it) besides its stamp."""
    stored = index.agent_file(str(file.path)) if known else None
    return _parse(stored) if stored is not None else _Stored()


def _import_one(agent: str, file: AgentFile, before: _Stored, first: Read | Exception,
                identities: Identities,
                counts: ImportCounts) -> tuple[FileCheckpoint, list[SessionRow]] | None:
    """One changed file as read from its checkpoint (`first`: that read, or what it raised): its
    new FileCheckpoint and row (None: it vanished)."""
    try:
        try:
            if isinstance(first, Exception):
                raise first
            read = first
        except AgentLogUnreadable:
            raise
        except Exception:  # noqa: BLE001 - a checkpoint that cannot continue: read it whole
            if before.checkpoint is None:
                raise
            read = get(agent).read(file)
        imported = _imported(agent, file, read, before, identities)
    except AgentLogUnreadable as exc:
        counts.unreadable += 1
        counts.problems[str(file.path)] = exc
        return None
    except Exception:  # noqa: BLE001 - one bad file never hides the others
        import logging  # only here: a listing that reads nothing loads no logging

        logging.getLogger("sessionkeeper.agents").exception(
            "could not read %s; it is skipped until it changes", file.path)
        counts.unreadable += 1
        try:
            st = os.stat(file.path)
        except OSError:
            return None
        return FileCheckpoint(path=str(file.path), agent=agent, root=str(file.root),
                              kind=file.kind, parent=file.parent, archived=file.archived,
                              size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino), []
    if read.mode == "appended":
        counts.appended += 1
    else:
        counts.read += 1
    return imported


def _imported(agent: str, file: AgentFile, read: Read, before: _Stored,
              identities: Identities) -> tuple[FileCheckpoint, list[SessionRow]]:
    """The FileCheckpoint and row of one file as read (redacted)."""
    extras = _extras(read, before, identities)
    row = session_row(read, identity=extras["identity"], todos=extras["todos"],
                      realpath=identities.realpath)
    from ..redact import redact_json

    cp = read.checkpoint
    text = redact_json(orjson.dumps({"v": _VERSION, "reader": _placeless(cp), **extras})).decode()
    return FileCheckpoint(
        path=str(file.path), agent=agent, root=str(file.root), kind=file.kind, parent=file.parent,
        archived=file.archived, size=cp.size, mtime_ns=cp.mtime_ns, inode=cp.inode,
        companions=cp.companions, session_id=row.session_id if row else None,
        checkpoint=text), [row] if row else []


class _Stored(NamedTuple):  # not a dataclass: ~5x cheaper to create at import (issue 13)
    """What the index kept of a file besides its stamp: the reader's checkpoint and our extras."""

    checkpoint: Checkpoint | None = None
    todos: dict[str, int] | None = None
    identity: dict[str, Any] | None = None


def _parse(stored: FileCheckpoint) -> _Stored:
    """The stored checkpoint of a file; an unreadable one is no checkpoint (a full read).

    The file's own path and its companions' come from the row (kept as they are: they are how
    the file is found), not from the redacted text, so a path that looks like a credential
    never makes every read a full one.
    """
    if not stored.checkpoint:
        return _Stored()
    try:
        raw = orjson.loads(stored.checkpoint)
        if raw.get("v") != _VERSION:
            return _Stored()
        reader = {**raw["reader"], "path": stored.path,
                  "companions": [list(c) for c in stored.companions]}
        reader["summary"] = {**reader["summary"], "path": stored.path}
        from .reads import Checkpoint

        return _Stored(Checkpoint.from_json(reader), raw.get("todos"), raw.get("identity"))
    except (ValueError, TypeError, KeyError, AttributeError):
        return _Stored()


def _placeless(cp: Checkpoint) -> dict[str, Any]:
    """The reader's checkpoint as stored: without the file's and its companions' paths, which
    the row keeps (`_parse` puts them back), so the text is smaller and a path that looks like
    a credential never makes the whole text go through redaction."""
    out = cp.to_json()  # its summary is a dict of its own
    del out["path"], out["companions"], out["summary"]["path"]
    return out


def _extras(read: Read, before: _Stored, identities: Identities) -> dict[str, Any]:
    """The todos and repository identity a row shows, carried over from the last read."""
    todos = before.todos if read.mode != "full" else None  # unchanged: as another process left it
    counted = read.checkpoint.state.get("counts", {}).get("todos", 1)  # 0: no todo record yet
    for record in reversed(read.records) if counted else ():  # the latest list
        if record.get("type") == "todo" and isinstance(record.get("items"), list):
            items = record["items"]
            todos = {"done": sum(1 for i in items if i.get("status") == "done"),
                     "total": len(items)}
            break
    cwd = read.summary.cwd or None
    identity = before.identity if before.identity and before.identity.get("cwd") == cwd \
        and not before.identity.get("outside_git") else None  # a repository may be made there
    if identity is None and cwd:
        identity = identities.of(cwd)
    return {"todos": todos, "identity": identity}


class Identities:
    """The repository identity and real path at each cwd, looked up once per pass (git runs
    only where it exists)."""

    def __init__(self) -> None:
        self._known: dict[str, dict[str, Any] | None] = {}
        self._real: dict[str, str] = {}

    def of(self, cwd: str) -> dict[str, Any] | None:
        """{cwd, repo_root, worktree, root_commits, remote_url, as_of} of the repository at `cwd`
        ({cwd, outside_git: True, as_of} when the folder exists in no repository)."""
        if cwd not in self._known:
            self._known[cwd] = _identity(cwd)
        return self._known[cwd]

    def realpath(self, cwd: str) -> str:
        """os.path.realpath of `cwd`, resolved once per pass (sessions share a few cwds)."""
        real = self._real.get(cwd)
        if real is None:
            real = self._real[cwd] = os.path.realpath(cwd)
        return real


def _identity(cwd: str) -> dict[str, Any] | None:
    if not os.path.isdir(cwd):
        return None
    from ..recovery.baseline import capture

    try:
        found = capture(cwd, dirty=False)
    except GitRefused:
        return None
    if found is None:  # the folder is in no repository (what a Claude "HEAD" branch may mean)
        return {"cwd": cwd, "outside_git": True, "as_of": _now()}
    if found.identity is None or not found.identity.root_commits:
        return None
    return {"cwd": cwd, "repo_root": found.repo_root, "worktree": found.worktree,
            "root_commits": list(found.identity.root_commits),
            "remote_url": found.identity.remote_url, "branch": found.branch, "head": found.head,
            "as_of": _now()}


def _now() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _iso(mtime_ns: int) -> str | None:
    if mtime_ns < 0:
        return None
    when = datetime.fromtimestamp(mtime_ns / 1e9, timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def session_row(read: Read, *, identity: Mapping[str, Any] | None = None,
                todos: Mapping[str, int] | None = None,
                realpath: Callable[[str], str] = os.path.realpath) -> SessionRow | None:
    """The index row of an agent file as read (None when the file names no session), redacted
    (`realpath`: how its cwd is resolved; a pass resolves each cwd once)."""
    from ..redact import redact_value

    s = read.summary
    if s.thread_id is None or s.session_id is None:
        return None
    file, cp = read.file, read.checkpoint
    summary = {"title": s.title, "branch": s.branch, "head": s.head, "todos": dict(todos or {})
               or None, "tests": None, "cost_usd": s.usd, "model": s.model,
               "identity": dict(identity) if identity else None,
               "agent": {k: v for k, v in s.to_json().items() if k not in _NOT_AGENT}}
    branch = s.branch if s.branch is not None or get(file.agent).records_git \
        else (identity or {}).get("branch")  # no git in the log: the branch first imported
    shown = redact_value({"cwd": realpath(s.cwd) if s.cwd else None, "branch": branch,
                          "title": s.title, "summary": summary})
    return SessionRow(
        session_id=s.session_id, thread_id=s.thread_id, path=str(file.path), agent=file.agent,
        archived=file.archived, started_at=s.created_at,
        last_activity=s.updated_at or _iso(cp.mtime_ns), source=SUBAGENT if file.kind == SUBAGENT
        else "startup", cwd=shown["cwd"], repo_key=(identity or {}).get("root_commits", [None])[0],
        branch=shown["branch"], title=shown["title"], first_seq=0, last_seq=s.records,
        event_count=s.records, size=cp.size, inode=cp.inode,
        status="ok" if s.status == "ok" else "damaged", summary=shown["summary"], imported=True)


_NOT_AGENT = frozenset({"path", "title", "cwd", "branch", "head", "model"})


def forget_all(index: Index, agents: Sequence[str]) -> int:
    """Forget every imported file of `agents` with its row; returns how many."""
    paths = [f.path for name in agents for f in index.agent_files(agent=name)]
    if paths:
        index.import_files([], [], gone=paths)
    return len(paths)
