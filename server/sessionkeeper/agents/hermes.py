"""Hermes Agent (Nous Research) sessions: `$HERMES_HOME/state.db` (SQLite, WAL), one row per session.

Roots: $HERMES_HOME (a comma list allowed), else ~/.hermes; each root's `state.db` and its
profiles' `profiles/<name>/state.db`. A session is addressed as `<db>#<session id>` (one "file"
per session: discovery lists them with one query per database, `hermes_db.overview`, and gives
each a stamp that changes when its rows do). Thread: Hermes's ids (`20261203_105737_f3b2e6`)
are not UUIDs, so a thread id is derived, `uuid5(NS, "hermes:<id>")`; a compression
continuation (its parent ended with `compression`) is a session of its chain root's thread, a
delegated sub-agent run (`model_config._delegate_from`) a sub-agent session of its parent's
thread, a /branch its own thread. Resume: `hermes --resume <id>` (HERMES_HOME set when the root
is not the default one). Reading is `hermes_reading.py`; the reset policy `hermes_policy.py`;
the mapping is in MAPPING.md beside this file.
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent import Agent
from .base import AGENT_NAMESPACE, MAX_LINE, AgentFile, AgentLogUnreadable, Entry, roots_from_env
from .registry import register

if TYPE_CHECKING:
    from .reads import Checkpoint, Read
    from .translate import Translator

DEFAULT_HOME = "~/.hermes"
UNREADABLE = "*"
"""The session id of the entry that stands for a database that could not be listed."""
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:")


def thread_of(native: str) -> str:
    """Our thread id of a Hermes session id (stable, a lowercase UUID)."""
    return str(uuid.uuid5(AGENT_NAMESPACE, f"hermes:{native}"))


def is_native_id(raw: object) -> bool:
    """True for a string shaped like a Hermes session id (what `thread_of` accepts from a user)."""
    return isinstance(raw, str) and 0 < len(raw) <= 128 and set(raw) <= _ID_CHARS and ".." not in raw


def databases(root: Path) -> list[Path]:
    """The session databases under one Hermes home: its own and each profile's."""
    out = []
    own = root / "state.db"
    if _present(own):
        out.append(own)
    try:
        profiles = sorted(os.scandir(root / "profiles"), key=lambda e: e.name)
    except OSError:
        profiles = []
    for entry in profiles:
        db = Path(entry.path) / "state.db"
        if entry.is_dir(follow_symlinks=False) and _present(db):
            out.append(db)
    return out


def _present(db: Path) -> bool:
    """True for a database file, and for one we may not look at (its read then says why)."""
    try:
        return stat.S_ISREG(os.stat(db).st_mode)
    except PermissionError:
        return True
    except OSError:
        return False


class HermesAgent(Agent):
    """Hermes Agent: sessions in state.db, read with SQL; resumed by `hermes --resume <id>`."""

    name = "hermes"

    def default_roots(self, env: Mapping[str, str] | None = None) -> list[Path]:
        """$HERMES_HOME (a comma list allowed), else ~/.hermes."""
        return roots_from_env("HERMES_HOME", [DEFAULT_HOME], env)

    def entries(self, root: Path) -> Iterator[Entry]:
        """One entry per session of every database under the root (one query per database)."""
        for entry, _ in self.stat_entries(root):
            yield entry

    def stat_entries(self, root: Path) -> Iterator[tuple[Entry, os.stat_result | None]]:
        """Each session with its stamp: (size, mtime_ns, inode) = (top message id, row digest, db inode).

        A database that cannot be read is listed as one entry `<db>#*` whose read raises why (an
        AgentLogUnreadable: the import names it; every other database is listed as usual)."""
        for db in databases(root):
            try:
                listed = list(_listing(db))
            except (AgentLogUnreadable, OSError):
                listed = [((f"{db}#{UNREADABLE}", "session", False, None, ()), None)]
            yield from listed

    def translator(self, file: AgentFile, state: dict[str, Any] | None) -> Translator:
        """A Hermes translator for one session."""
        from .hermes_translator import HermesTranslator

        return HermesTranslator(file, state)

    def read(self, file: AgentFile, checkpoint: Checkpoint | None = None, *,
             max_line: int = MAX_LINE) -> Read:
        """Read one session: only its messages above the checkpoint's id when that still holds."""
        from .hermes_reading import read_session, split

        db, native = split(file.path)
        if native == UNREADABLE:
            from .hermes_db import consistent, overview

            consistent(db, overview)  # raises what keeps it unreadable
            raise AgentLogUnreadable(f"{db}: could not be listed; it can be now: list again")
        thread = file.parent or thread_of(native)  # a continuation's or sub-agent's
        return read_session(self, file, checkpoint, thread_id=thread)

    def read_many(self, items: Sequence[tuple[AgentFile, Checkpoint | None]], *,
                  max_line: int = MAX_LINE) -> Iterator[Read | Exception]:
        """read() of each session, with a few queries per database for all of them."""
        from .hermes_reading import read_sessions, split

        alone: dict[int, Read | Exception] = {}
        bulk: list[tuple[AgentFile, Checkpoint | None, str]] = []
        for n, (file, cp) in enumerate(items):
            try:
                native = split(file.path)[1]
            except AgentLogUnreadable as exc:
                alone[n] = exc
                continue
            if native == UNREADABLE:
                try:
                    alone[n] = self.read(file, cp, max_line=max_line)
                except Exception as exc:  # noqa: BLE001 - handed on as read() raises it
                    alone[n] = exc
                continue
            bulk.append((file, cp, file.parent or thread_of(native)))
        read = iter(read_sessions(self, bulk))
        for n in range(len(items)):
            yield alone[n] if n in alone else next(read)

    def resume_command(self, thread_id: str) -> list[str]:
        """`hermes --resume <id>` (given Hermes's own session id)."""
        return ["hermes", "--resume", thread_id]

    def command_for(self, kind: str, thread_id: str, file: AgentFile) -> list[str] | None:
        """`hermes --resume <its session id>`, with HERMES_HOME when the root is not ~/.hermes; no fork
        (Hermes branches only from inside a session, with /branch)."""
        if kind != "continue":
            return None
        from .hermes_reading import split

        db, native = split(file.path)
        argv = self.resume_command(native)
        home = db.parent
        if os.path.realpath(home) != os.path.realpath(os.path.expanduser(DEFAULT_HOME)):
            argv = ["env", f"HERMES_HOME={home}", *argv]
        return argv

    def check_notes(self, meta: Mapping[str, Any], *, now: float | None = None) -> list[str]:
        """A chat's reset policy, and a reset due since its last message (`hermes_policy.py`)."""
        from .hermes_policy import notes

        return notes(meta, now=now)

    def thread_id_of(self, raw: str) -> str | None:
        """Our thread id of a Hermes session id a user typed (None: not one)."""
        return thread_of(raw) if is_native_id(raw) and not _is_uuid(raw) else None


def _is_uuid(raw: str) -> bool:
    try:
        return str(uuid.UUID(raw)) == raw
    except ValueError:
        return False


def _listing(db: Path) -> list[tuple[Entry, os.stat_result | None]]:
    """Each session's entry and stamp; a session whose overview row is the same as in this
    process's last listing of the database (and the sessions' places too) keeps its last ones."""
    from .hermes_db import consistent, fingerprint, overview

    inode = os.stat(db).st_ino
    rows = consistent(db, overview)
    by_id = {row[0]: row for row in rows}
    places = [row[:4] for row in rows]
    key = str(db)
    last = _LAST.get(key)
    same = last is not None and last[0] == inode and last[1] == places
    before = last[2] if last is not None and same else {}
    out: list[tuple[Entry, os.stat_result | None]] = []
    now: dict[str, tuple[tuple[Any, ...], tuple[Entry, os.stat_result | None]]] = {}
    for row in rows:
        native = row[0]
        if not isinstance(native, str) or not native:
            continue
        kept = before.get(native)
        if kept is not None and kept[0] == row:
            listed = kept[1]
        else:
            kind, parent = _place(native, by_id)
            stamp = os.stat_result((0o100444, inode, 0, 1, 0, 0, int(row[5] or 0), 0, 0, 0,
                                    0.0, 0.0, 0.0, 0, fingerprint(row), 0))
            listed = (f"{db}#{native}", kind, bool(row[4]), parent, ()), stamp
        now[native] = (row, listed)
        out.append(listed)
    _LAST[key] = (inode, places, now)
    return out


_LAST: dict[str, tuple[int, list[tuple[Any, ...]], dict[str, Any]]] = {}
"""db path -> (inode, the sessions' places, id -> (overview row, its entry)) of its last listing."""


def _place(native: str, by_id: Mapping[str, tuple[Any, ...]]) -> tuple[str, str | None]:
    """(kind, the thread it belongs to when not its own): a compression continuation belongs to its
    chain root's thread, a delegated run is a sub-agent session of its delegator's thread."""
    row = by_id[native]
    delegate = row[2]
    if isinstance(delegate, str) and delegate in by_id:
        return "subagent", thread_of(_root(delegate, by_id))
    root = _root(native, by_id)
    return "session", (thread_of(root) if root != native else None)


def _root(native: str, by_id: Mapping[str, tuple[Any, ...]]) -> str:
    seen = {native}
    current = native
    while True:
        parent = by_id[current][1]
        if not isinstance(parent, str) or parent not in by_id or parent in seen \
                or by_id[parent][3] != "compression":
            return current
        seen.add(parent)
        current = parent


def _register() -> None:
    register(HermesAgent())


_register()
