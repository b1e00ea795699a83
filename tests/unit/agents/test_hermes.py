"""Hermes Agent's state.db: read, incremental, damaged, unreadable — on what the real Hermes wrote.

Fixture: `fixtures/agents/hermes/real/` (recorded by `record.py` beside it from Hermes 0.19.0: a
terminal session with two shell calls, a Telegram DM session ended by an idle reset and the one
that continued the chat). Each test works on a copy; the damage is made with sqlite3 on the copy
as Hermes would write it (a row inserted, a row deactivated, a WAL torn, a page overwritten).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from sessionkeeper.agents.base import AgentFile, AgentLogUnreadable
from sessionkeeper.agents.hermes import thread_of
from sessionkeeper.agents.importer import AgentSources, import_agents
from sessionkeeper.keeper.agent_threads import agent_thread_id
from sessionkeeper.recovery.replay import replay
from sessionkeeper.session.validate import validate_event
from sessionkeeper.store.index.memory import MemoryIndex
from tests.unit._agents import tree_digest
from tests.unit._hermes import CLI, HERMES, NEW_CHAT, OLD_CHAT, REAL, append_message, home


def session(root: Path, native: str) -> AgentFile:
    """The discovered file of one Hermes session."""
    [found] = [f for f in HERMES.discover([root]) if f.path.name == f"state.db#{native}"]
    return found



def test_the_recorded_sessions_are_read_with_ids_place_source_and_lifecycle() -> None:
    """Fixture: `real/`; three sessions, each its own thread (no compression here)."""
    before = tree_digest(REAL)
    found = {f.path.name.split("#")[1]: f for f in HERMES.discover([REAL])}
    assert set(found) == {CLI, OLD_CHAT, NEW_CHAT}
    cli = HERMES.read(found[CLI])
    assert (cli.summary.thread_id, cli.summary.cwd, cli.summary.title) == (
        thread_of(CLI), "/work/repo-a", "Create a file please.")
    assert (cli.summary.operations, cli.summary.in_doubt, cli.summary.status) == (2, 0, "ok")
    assert cli.meta is not None and cli.meta["data"]["agent"]["source_context"] == {
        "platform": "cli", "chat": False}
    old = HERMES.read(found[OLD_CHAT])
    assert old.meta is not None
    context = old.meta["data"]["agent"]["source_context"]
    assert (context["platform"], context["chat_type"], context["chat_id"], context["route"]) == (
        "telegram", "dm", "4242", "agent:main:telegram:dm:4242")
    assert context["user"].startswith("user_") and "777" not in str(old.meta)
    [reset] = [r for r in old.records if r["type"] == "lifecycle"]
    assert reset["source"] == "idle_reset" and NEW_CHAT in reset["reason"]
    for read in (cli, old):
        assert read.meta is not None
        for record in [read.meta, *read.records]:
            validate_event(record)
    assert tree_digest(REAL) == before


def test_a_chat_is_bound_to_no_workspace_and_a_terminal_session_to_its_cwd(tmp_path: Path) -> None:
    """Fixture: `real/`; the chat checks against no folder, the terminal session against /work/repo-a."""
    chat = replay([HERMES.read(session(REAL, NEW_CHAT)).rollout()])
    cli = replay([HERMES.read(session(REAL, CLI)).rollout()])
    from tests.unit._agents import validate

    assert validate(chat, tmp_path) == ([], "ok")
    differences, verdict = validate(cli, tmp_path)
    assert verdict != "ok" and differences[0].kind in ("relocated", "cwd_missing", "other_repository")


def test_an_appended_message_is_read_alone_and_the_others_are_not_opened(tmp_path: Path) -> None:
    """Fixture: a copy of `real/`; one user message added to the terminal session."""
    root = home(tmp_path)
    first = {str(f.path): HERMES.read(f) for f in HERMES.discover([root])}
    stamps = {p: r.checkpoint for p, r in first.items()}
    assert HERMES.changes([root], checkpoints=stamps).changed == []
    append_message(root, CLI, "and now the docs")
    changed = HERMES.changes([root], checkpoints=stamps).changed
    assert [f.path.name for f in changed] == [f"state.db#{CLI}"]
    again = HERMES.read(changed[0], stamps[str(changed[0].path)])
    assert again.mode == "appended" and again.lines_parsed == 1
    assert [(r["type"], r["seq"]) for r in again.records] == [
        ("message", first[str(changed[0].path)].summary.records + 1)]
    whole = HERMES.read(changed[0])
    assert whole.summary == again.summary


def test_a_rewound_message_makes_the_session_be_read_whole(tmp_path: Path) -> None:
    """Fixture: a copy of `real/`; Hermes's /undo deactivates the last exchange's rows."""
    root = home(tmp_path)
    file = session(root, CLI)
    first = HERMES.read(file)
    db = sqlite3.connect(root / "state.db")
    db.execute("UPDATE messages SET active = 0 WHERE session_id = ? AND id = "
               "(SELECT MAX(id) FROM messages WHERE session_id = ?)", (CLI, CLI))
    db.execute("UPDATE sessions SET rewind_count = rewind_count + 1 WHERE id = ?", (CLI,))
    db.commit()
    db.close()
    again = HERMES.read(session(root, CLI), first.checkpoint)
    assert again.mode == "full" and again.summary.rewound_lines == 1
    assert again.summary.messages == first.summary.messages - 1


def test_unknown_roles_odd_tool_calls_and_bad_text_are_counted_not_fatal(tmp_path: Path) -> None:
    """Fixture: a copy of `real/`; rows of a role we do not know, tool_calls that are not JSON,
    content bytes that are not UTF-8, and a column a newer Hermes added."""
    root = home(tmp_path)
    db = sqlite3.connect(root / "state.db")
    db.execute("ALTER TABLE messages ADD COLUMN future_field TEXT")
    now = time.time()
    db.execute("INSERT INTO messages (session_id, role, content, timestamp, active, future_field) "
               "VALUES (?, 'critic', 'hm', ?, 1, 'x')", (CLI, now))
    db.execute("INSERT INTO messages (session_id, role, content, tool_calls, timestamp, active) "
               "VALUES (?, 'assistant', 'ok', '[{not json', ?, 1)", (CLI, now))
    db.execute("INSERT INTO messages (session_id, role, content, timestamp, active) "
               "VALUES (?, 'user', CAST(X'6869FF' AS TEXT), ?, 1)", (CLI, now))
    db.commit()
    db.close()
    read = HERMES.read(session(root, CLI))
    assert read.summary.status == "ok" and read.summary.unrecognized == 1
    assert read.checkpoint.state["unmappable"] == {"message:assistant:tool_calls": 1}
    assert "hi\ufffd" in [r.get("text") for r in read.records if r["type"] == "message"]


def test_a_torn_wal_tail_loses_only_its_uncommitted_frame(tmp_path: Path) -> None:
    """Fixture: a copy of `real/` in WAL mode; a message committed into the WAL, then the WAL cut
    inside that frame (a crash mid-write): the database reads as before the message."""
    root = home(tmp_path)
    before = {f.path.name: HERMES.read(f).summary.messages for f in HERMES.discover([root])}
    db = sqlite3.connect(root / "state.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.close()
    writer = sqlite3.connect(root / "state.db")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO messages (session_id, role, content, timestamp, active) "
                   "VALUES (?, 'user', 'lost in the crash', ?, 1)", (CLI, time.time()))
    writer.commit()
    wal = (root / "state.db-wal").read_bytes()
    shm = (root / "state.db-shm").read_bytes()
    writer.close()  # checkpoints: put back the files as the crash left them
    main = root / "state.db"
    shutil.copyfile(REAL / "state.db", main)
    main.write_bytes(main.read_bytes()[:18] + b"\x02\x02" + main.read_bytes()[20:])  # WAL, as it was
    (root / "state.db-wal").write_bytes(wal)
    (root / "state.db-shm").write_bytes(shm)
    whole = {f.path.name: HERMES.read(f).summary.messages for f in HERMES.discover([root])}
    assert whole[f"state.db#{CLI}"] == before[f"state.db#{CLI}"] + 1  # the committed frame is read
    (root / "state.db-wal").write_bytes(wal[:len(wal) - 100])
    digest = tree_digest(root)
    after = {f.path.name: HERMES.read(f).summary.messages for f in HERMES.discover([root])}
    assert after == before
    assert tree_digest(root) == digest


def test_a_damaged_database_is_a_typed_error_and_the_other_homes_are_still_listed(
        tmp_path: Path) -> None:
    """Fixture: two copies of `real/`; pages in the middle of one overwritten with garbage."""
    good, bad = home(tmp_path, "good"), home(tmp_path, "bad")
    data = bytearray((bad / "state.db").read_bytes())
    data[8192:8192 + 4096 * 8] = b"\xde\xad" * (4096 * 4)
    (bad / "state.db").write_bytes(bytes(data))
    index = MemoryIndex()
    counts = import_agents(index, AgentSources(agents=("hermes",), roots={
        "hermes": (str(good), str(bad))}))
    listed = {row.thread_id for row in index.sessions()}
    assert {thread_of(CLI), thread_of(OLD_CHAT), thread_of(NEW_CHAT)} <= listed
    assert counts.problems and all(isinstance(e, AgentLogUnreadable) for e in counts.problems.values())
    assert all(str(bad) in path for path in counts.problems)
    with pytest.raises(AgentLogUnreadable):
        HERMES.read(AgentFile("hermes", "session", bad / f"state.db#{CLI}", bad))


def test_a_database_of_another_users_permissions_is_a_typed_error_for_it_alone(tmp_path: Path) -> None:
    """Fixture: two copies of `real/`, one in a folder of mode 0700 owned by root; listed by a child
    process that drops to an unprivileged user (nobody) once its modules are loaded."""
    if os.geteuid() != 0:
        pytest.fail("this test changes users: run it as root (CI and the dev machines do)")
    shared = Path(tempfile.mkdtemp(prefix="sk-hermes-perm-"))
    try:
        shared.chmod(0o755)
        open_home, private = home(shared, "open"), home(shared, "private")
        for path in [open_home, *open_home.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        private.chmod(0o700)
        out = subprocess.run([sys.executable, "-c", _list_code(open_home, private)], capture_output=True,
                             text=True, timeout=120)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    assert out.returncode == 0, out.stderr
    listed, problems = out.stdout.splitlines()
    assert sorted(listed.split(",")) == sorted([thread_of(CLI), thread_of(OLD_CHAT), thread_of(NEW_CHAT)])
    assert "private/state.db" in problems and "AgentLogUnreadable" in problems


def _list_code(open_home: Path, private: Path) -> str:
    """A child that imports both homes as nobody (a first pass as root only loads the modules)."""
    roots = f"{{'hermes': ({str(open_home)!r}, {str(private)!r})}}"
    return ("import os\n"
            "from sessionkeeper.agents.importer import AgentSources, import_agents\n"
            "from sessionkeeper.store.index.memory import MemoryIndex\n"
            f"import_agents(MemoryIndex(), AgentSources(agents=('hermes',), roots={{'hermes': "
            f"({str(open_home)!r},)}}))\n"
            "from sessionkeeper.agents import hermes_db\n"
            "hermes_db._drop_all()  # the snapshots root made are root's\n"
            "os.setgid(65534); os.setuid(65534)\n"
            "index = MemoryIndex()\n"
            f"counts = import_agents(index, AgentSources(agents=('hermes',), roots={roots}))\n"
            "print(','.join(sorted({r.thread_id for r in index.sessions()})))\n"
            "print([(p, type(e).__name__) for p, e in counts.problems.items()])\n")


def test_a_hermes_session_id_names_its_derived_thread() -> None:
    """No fixture: a Hermes id maps to its uuid5 thread; a UUID is left as it is."""
    assert agent_thread_id(CLI) == thread_of(CLI) != CLI
    uuid = thread_of(CLI)
    assert agent_thread_id(uuid) == uuid
