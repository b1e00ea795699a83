"""Incremental reading of one Hermes session out of `state.db`: the rows added since a checkpoint.

A Hermes "file" is one session of a database: `<home>/state.db#<session id>`. Its stamp is what
the listing's one query says of it (`hermes_db.overview`): size = the highest message id, mtime =
a digest of its message counts (all, inactive) and of the session row's changing fields, inode =
the database file's. Decision per read: the same stamp → nothing is read ("unchanged"); the same
database and inactive count with a higher message id → only the messages above the checkpoint's
id are folded ("appended": Hermes appends messages with ever-growing ids); anything else — a
rewind or compaction that deactivated rows, another database file, a checkpoint of another
version — is read whole ("full"). Nothing is written anywhere.
"""

from __future__ import annotations

import copy
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import AgentFile, AgentLogUnreadable
from .hermes_db import (
    BULK,
    consistent,
    fingerprint,
    messages,
    messages_of,
    overview,
    overviews,
    session_row,
    session_rows,
)
from .reading import summary_of
from .reads import CHECKPOINT_VERSION, Checkpoint, Read

if TYPE_CHECKING:
    from .agent import Agent
    from .hermes_translator import HermesTranslator


def split(path: Path | str) -> tuple[Path, str]:
    """(database file, Hermes session id) of a session's path `<db>#<id>`."""
    db, sep, native = str(path).rpartition("#")
    if not sep or not native:
        raise AgentLogUnreadable(f"{path}: not a Hermes session path (<state.db>#<session id>)")
    return Path(db), native


def read_session(agent: Agent, file: AgentFile, checkpoint: Checkpoint | None, *,
                 thread_id: str) -> Read:
    """Read one Hermes session (see the module docstring for what is folded when)."""
    db, native = split(file.path)
    try:
        inode = os.stat(db).st_ino
    except OSError as exc:
        raise AgentLogUnreadable(f"{db}: {exc.strerror or exc}") from None
    return consistent(db, partial(_read, agent, file, checkpoint, native=native, inode=inode,
                                  thread_id=thread_id))


def _read(agent: Agent, file: AgentFile, cp: Checkpoint | None, conn: sqlite3.Connection, *,
          native: str, inode: int, thread_id: str) -> Read:
    found = overview(conn, native)
    row = session_row(conn, native) if found else None
    return _fold(agent, file, cp, found[0] if found else None, row, native=native, inode=inode,
                 thread_id=thread_id,
                 messages=lambda after: messages(conn, native, after=after))


def read_sessions(agent: Agent, items: Sequence[tuple[AgentFile, Checkpoint | None, str]]
                  ) -> list[Read | Exception]:
    """Read sessions (file, checkpoint, thread id) of one or more databases as `read_session`
    reads each, with a few queries per database for all of them (at most BULK at a time) instead
    of four per session: each session's Read, or the exception its own read raises.

    A database that fails a bulk query (damage, a schema it cannot read) is read one session at
    a time, as `read_session` does, so one damaged row costs only its own session."""
    out: list[Read | Exception | None] = [None] * len(items)
    by_db: dict[Path, list[tuple[int, str]]] = {}
    for n, (file, _, _) in enumerate(items):
        try:
            db, native = split(file.path)
        except AgentLogUnreadable as exc:
            out[n] = exc
            continue
        by_db.setdefault(db, []).append((n, native))
    for db, named in by_db.items():
        for start in range(0, len(named), BULK):
            part = named[start:start + BULK]
            try:
                inode = os.stat(db).st_ino
                reads = consistent(db, partial(_read_bulk, agent, [(items[n], native) for n, native in part],
                                               inode=inode))
            except (AgentLogUnreadable, OSError):
                reads = [_one(agent, items[n]) for n, _ in part]
            for (n, _), read in zip(part, reads, strict=True):
                out[n] = read
    return [r for r in out if r is not None]


def _one(agent: Agent, item: tuple[AgentFile, Checkpoint | None, str]) -> Read | Exception:
    file, cp, thread_id = item
    try:
        return read_session(agent, file, cp, thread_id=thread_id)
    except Exception as exc:  # noqa: BLE001 - handed to the caller as read() would raise it
        return exc


def _read_bulk(agent: Agent, named: list[tuple[tuple[AgentFile, Checkpoint | None, str], str]],
               conn: sqlite3.Connection, *, inode: int) -> list[Read | Exception]:
    natives = [native for _, native in named]
    found, rows = overviews(conn, natives), session_rows(conn, natives)
    full = [native for (_, cp, _), native in named if cp is None]  # fetched together
    fetched = messages_of(conn, full)
    out: list[Read | Exception] = []
    for (file, cp, thread_id), native in named:
        def rows_after(after: int, native: str = native) -> Iterable[dict[str, Any]]:
            if after == 0 and native in fetched:
                return fetched[native]
            return messages(conn, native, after=after)
        try:
            out.append(_fold(agent, file, cp, found.get(native), rows.get(native), native=native,
                             inode=inode, thread_id=thread_id, messages=rows_after))
        except sqlite3.DatabaseError:
            raise  # the bulk read fails: each session is read alone
        except Exception as exc:  # noqa: BLE001 - handed to the caller as read() would raise it
            out.append(exc)
    return out


def _fold(agent: Agent, file: AgentFile, cp: Checkpoint | None, stamp: tuple[Any, ...] | None,
          row: dict[str, Any] | None, *, native: str, inode: int, thread_id: str,
          messages: Callable[[int], Iterable[dict[str, Any]]]) -> Read:
    """One session's Read from its overview row (`stamp`), its session row and its messages
    above an id (`messages(after)`)."""
    if stamp is None or row is None:
        raise AgentLogUnreadable(f"{file.path}: no Hermes session {native} in {split(file.path)[0]}")
    top, inactive = int(stamp[5] or 0), int(stamp[7] or 0)
    finger = fingerprint(stamp)
    usable = (cp is not None and cp.version == CHECKPOINT_VERSION and cp.agent == file.agent
              and cp.path == str(file.path) and cp.inode == inode)
    if usable and cp is not None and cp.size == top and cp.mtime_ns == finger:
        return Read(file, "unchanged", "unchanged", cp)
    mode, reason = "full", "new" if cp is None else "changed"
    state: dict[str, Any] | None = None
    if usable and cp is not None and cp.state.get("inactive") == inactive and top >= cp.offset \
            and cp.state.get("native_id") == native:
        mode, reason, state = "appended", "grown", copy.deepcopy(cp.state)
    elif cp is not None and not usable:
        reason = "replaced" if cp.inode != inode else "checkpoint of another file or version"
    translator: HermesTranslator = agent.translator(file, state)  # type: ignore[assignment]
    after = cp.offset if mode == "appended" and cp is not None else 0
    lines = cp.lines if mode == "appended" and cp is not None else 0
    translator.session(row, thread_id=thread_id)
    parsed = 0
    for message in messages(after):
        parsed += 1
        try:
            translator.feed(lines + parsed, message)
        except Exception as exc:  # noqa: BLE001 - one odd row never stops the session
            translator.unmappable(lines + parsed, f"message:{message.get('role')}", exc)
    translator.session_end(row)
    translator.finish()
    st = translator.state
    st["lines"], st["inactive"] = lines + parsed, inactive
    checkpoint = Checkpoint(agent=file.agent, path=str(file.path), size=top, mtime_ns=finger,
                            inode=inode, offset=top, lines=lines + parsed, head_len=0, head_sha256="",
                            anchor_sha256="", state=st, summary=summary_of(file, translator, tail=None))
    return Read(file, mode, reason, checkpoint, records=translator.records,
                meta_factory=partial(_meta, agent, file, st), lines_parsed=parsed)


def _meta(agent: Agent, file: AgentFile, state: dict[str, Any]) -> dict[str, Any] | None:
    return agent.translator(file, state).meta()
