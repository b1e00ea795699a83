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
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import AgentFile, AgentLogUnreadable
from .hermes_db import consistent, fingerprint, messages, overview, session_row
from .reading import summary_of
from .reads import CHECKPOINT_VERSION, Checkpoint, Read

if TYPE_CHECKING:
    import sqlite3

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
    if not found or row is None:
        raise AgentLogUnreadable(f"{file.path}: no Hermes session {native} in {split(file.path)[0]}")
    stamp = found[0]
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
    for message in messages(conn, native, after=after):
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
