"""Hermes sessions read in bulk (`HermesAgent.read_many`, what an import pass uses): the same Reads
as one session at a time, an appended message imported once, a replaced database read whole, a
session that is gone or a damaged database a typed error for it alone.

Fixture: `fixtures/agents/hermes/real/` (the state.db the real Hermes 0.19.0 wrote: a terminal
session and two Telegram DM sessions), copied per test and changed with sqlite3 as Hermes would.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from sessionkeeper.agents.base import AgentLogUnreadable
from sessionkeeper.agents.hermes import thread_of
from sessionkeeper.agents.importer import AgentSources, import_agents
from sessionkeeper.agents.reads import Read
from sessionkeeper.store.index.memory import MemoryIndex
from tests.unit._hermes import CLI, HERMES, append_message, home


def same(a: Read, b: Read) -> bool:
    """Two Reads of one session say the same (mode, records, summary, checkpoint, meta)."""
    return (a.mode, a.records, a.summary, a.checkpoint.to_json(), a.meta) == \
        (b.mode, b.records, b.summary, b.checkpoint.to_json(), b.meta)


def sources(*roots: Path) -> AgentSources:
    """Hermes alone, from these homes."""
    return AgentSources(agents=("hermes",), roots={"hermes": tuple(str(r) for r in roots)})


def test_a_bulk_read_gives_what_each_session_read_alone_gives(tmp_path: Path) -> None:
    """Fixture: a copy of `real/`, read whole, then from checkpoints after one message is added."""
    root = home(tmp_path)
    files = list(HERMES.discover([root]))
    bulk = list(HERMES.read_many([(f, None) for f in files]))
    assert len(bulk) == len(files) == 3
    for file, read in zip(files, bulk, strict=True):
        assert isinstance(read, Read) and same(read, HERMES.read(file))
    append_message(root, CLI, "and now the docs")
    again = list(HERMES.read_many([(f, r.checkpoint) for f, r in zip(files, bulk, strict=True)
                                   if isinstance(r, Read)]))
    modes = {f.path.name: r.mode for f, r in zip(files, again, strict=True) if isinstance(r, Read)}
    assert modes == {f.path.name: "appended" if f.path.name.endswith(CLI) else "unchanged"
                     for f in files}
    for file, first, read in zip(files, bulk, again, strict=True):
        assert isinstance(first, Read) and isinstance(read, Read)
        assert same(read, HERMES.read(file, first.checkpoint))


def test_an_appended_message_is_imported_exactly_once(tmp_path: Path) -> None:
    """Fixture: a copy of `real/` imported; one message added to the terminal session; two passes."""
    root = home(tmp_path)
    index = MemoryIndex()
    assert import_agents(index, sources(root)).read == 3
    [before] = [r for r in index.sessions() if r.thread_id == thread_of(CLI)]
    append_message(root, CLI, "and now the docs")
    counts = import_agents(index, sources(root))
    assert (counts.appended, counts.read, counts.unchanged) == (1, 0, 2)
    idle = import_agents(index, sources(root))
    assert (idle.appended, idle.read, idle.unchanged) == (0, 0, 3)
    [after] = [r for r in index.sessions() if r.thread_id == thread_of(CLI)]
    assert after.event_count == before.event_count + 1
    fresh = MemoryIndex()
    import_agents(fresh, sources(root))
    [whole] = [r for r in fresh.sessions() if r.thread_id == thread_of(CLI)]
    assert (whole.event_count, whole.summary) == (after.event_count, after.summary)


def test_a_replaced_database_is_read_again_whole(tmp_path: Path) -> None:
    """Fixture: a copy of `real/` imported; then state.db replaced by a copy of itself (a new
    inode, as a restore or a `VACUUM INTO` and rename leaves it) with one message more."""
    root = home(tmp_path)
    index = MemoryIndex()
    import_agents(index, sources(root))
    shutil.copyfile(root / "state.db", root / "state.db.new")
    os.replace(root / "state.db.new", root / "state.db")
    append_message(root, CLI, "after the restore")
    counts = import_agents(index, sources(root))
    assert (counts.read, counts.appended, counts.unreadable) == (3, 0, 0)
    fresh = MemoryIndex()
    import_agents(fresh, sources(root))
    assert sorted((r.thread_id, r.event_count) for r in index.sessions()) == \
        sorted((r.thread_id, r.event_count) for r in fresh.sessions())


def test_a_session_gone_before_its_bulk_read_is_a_typed_error_and_the_others_are_read(
        tmp_path: Path) -> None:
    """Fixture: a copy of `real/` listed; then the terminal session's rows deleted before the read."""
    root = home(tmp_path)
    files = list(HERMES.discover([root]))
    db = sqlite3.connect(root / "state.db")
    db.execute("DELETE FROM messages WHERE session_id = ?", (CLI,))
    db.execute("DELETE FROM sessions WHERE id = ?", (CLI,))
    db.commit()
    db.close()
    for file, read in zip(files, HERMES.read_many([(f, None) for f in files]), strict=True):
        if file.path.name.endswith(CLI):
            assert isinstance(read, AgentLogUnreadable) and CLI in str(read)
        else:
            assert isinstance(read, Read) and same(read, HERMES.read(file))


def test_a_damaged_database_is_a_typed_error_for_each_of_its_sessions_in_bulk(tmp_path: Path) -> None:
    """Fixture: two copies of `real/` listed; pages in the middle of one overwritten with garbage."""
    good, bad = home(tmp_path, "good"), home(tmp_path, "bad")
    files = list(HERMES.discover([good, bad]))
    data = bytearray((bad / "state.db").read_bytes())
    data[8192:8192 + 4096 * 8] = b"\xde\xad" * (4096 * 4)
    (bad / "state.db").write_bytes(bytes(data))
    for file, read in zip(files, HERMES.read_many([(f, None) for f in files]), strict=True):
        if str(bad) in str(file.path):
            assert isinstance(read, AgentLogUnreadable)
        else:
            assert isinstance(read, Read) and read.summary.status == "ok"
