"""OpenClaw's SQLite session store read by the openclaw agent: listing, incremental reads, damage.

Every store is built by tests/unit/_openclaw.py from the fixture a real OpenClaw 2026.9.6 run
produced (fixtures/agents/openclaw/): its own schema, rows and transcript events.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from sessionkeeper import agents
from sessionkeeper.agents.base import AgentLogUnreadable
from sessionkeeper.agents.importer import AgentSources, import_agents
from sessionkeeper.agents.openclaw_store import valid_session_id
from sessionkeeper.store.index.memory import MemoryIndex
from tests.unit import _openclaw as oc
from tests.unit._agents import tree_digest

OPENCLAW = agents.get("openclaw")


def _import(root: Path):  # type: ignore[no-untyped-def]
    """An import of the state dir at `root` into a fresh index; `root` must be unchanged after."""
    before = tree_digest(root)
    counts = import_agents(MemoryIndex(), AgentSources(agents=("openclaw",),
                                                       roots={"openclaw": (str(root),)}))
    assert tree_digest(root) == before
    return counts


def _only(root: Path):  # type: ignore[no-untyped-def]
    [file] = list(OPENCLAW.discover([root]))
    return file


def test_the_real_runs_session_reads_as_one_thread_with_its_scope_and_tool_calls(tmp_path: Path) -> None:
    """Fixture: the store of the real run (two turns, each one exec call)."""
    oc.build(tmp_path)
    file = _only(tmp_path)
    read = OPENCLAW.read(file)
    s = read.summary
    assert (s.thread_id, s.status, s.cwd, s.model) == (oc.SESSION, "ok", oc.CWD, "claude-fake")
    assert (s.messages, s.operations, s.in_doubt, s.damage) == (4, 2, 0, 0)
    assert s.title == "RUN: echo hi-from-openclaw" and s.client_version == "2026.9.6"
    meta = read.meta
    assert meta is not None and meta["data"]["agent"]["scope"] == f"main:{oc.SESSION}"
    assert meta["data"]["agent"]["session_key"] == oc.KEY and meta["baseline"] is None
    ops = [(r["operation_id"], r["status"]) for r in read.records if r["type"] == "operation"]
    assert [status for _, status in ops] == ["started", "committed", "started", "committed"]
    assert ops[0][0] == "toolu_40bced98a64a4c0c8753bd84"
    assert [r["seq"] for r in read.records] == list(range(1, len(read.records) + 1))


def test_reading_a_store_changes_nothing_in_the_state_dir_with_or_without_wal_frames(
        tmp_path: Path) -> None:
    """Fixture: the real run's store; then a writer holding WAL frames open (no checkpoint)."""
    db = oc.build(tmp_path)
    before = tree_digest(tmp_path)
    OPENCLAW.read(_only(tmp_path))
    assert tree_digest(tmp_path) == before
    writer = oc.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    oc.add(writer, {"session_id": oc.SESSION, "seq": 100, "created_at": 1796296100000,
                    "event": '{"type":"message","message":{"role":"user","content":"more"}}'})
    writer.commit()
    try:
        assert os.path.getsize(f"{db}-wal") > 0
        before = tree_digest(tmp_path)
        read = OPENCLAW.read(_only(tmp_path))
        assert tree_digest(tmp_path) == before
        assert read.summary.messages == 5  # the frame only in the WAL was read
        oc.add(writer, {"session_id": oc.SESSION, "seq": 101, "created_at": 1796296200000,
                        "event": '{"type":"message","message":{"role":"user","content":"again"}}'})
        writer.commit()  # only the WAL grows: the kept private copy takes the WAL alone
        before = tree_digest(tmp_path)
        again = OPENCLAW.read(_only(tmp_path), read.checkpoint)
        assert tree_digest(tmp_path) == before
        assert (again.mode, again.summary.messages) == ("appended", 6)
    finally:
        writer.close()


def test_one_appended_event_is_read_alone_from_the_checkpoint(tmp_path: Path) -> None:
    """Fixture: the real run's store, then one user message appended."""
    db = oc.build(tmp_path)
    first = OPENCLAW.read(_only(tmp_path))
    assert OPENCLAW.read(_only(tmp_path), first.checkpoint).mode == "unchanged"
    oc.append(db, oc.SESSION, oc.message("user", "and one more thing"))
    again = OPENCLAW.read(_only(tmp_path), first.checkpoint)
    assert (again.mode, again.lines_parsed) == ("appended", 1)
    assert [r["seq"] for r in again.records] == [first.summary.records + 1]
    assert again.summary.messages == first.summary.messages + 1


def test_a_rewritten_window_is_read_whole(tmp_path: Path) -> None:
    """Fixture: the real run's store; then its rewrite generation bumped and an event deleted."""
    db = oc.build(tmp_path)
    first = OPENCLAW.read(_only(tmp_path))
    with oc.connect(db) as con:
        con.execute("UPDATE transcript_rewrite_watermarks SET generation = 'g2'")
        con.execute("DELETE FROM transcript_events WHERE seq = 4")
    again = OPENCLAW.read(_only(tmp_path), first.checkpoint)
    assert (again.mode, again.reason) == ("full", "rewritten")
    assert again.summary.messages == first.summary.messages - 1


def test_a_bad_event_in_the_middle_is_damage_and_the_rest_is_read(tmp_path: Path) -> None:
    """Fixture: the real run's events with seq 4 (the first prompt) replaced by garbage."""
    rows = oc.fixture_rows()
    rows[4] = {**rows[4], "event": "{not json"}
    oc.build(tmp_path, rows=rows)
    read = OPENCLAW.read(_only(tmp_path))
    assert read.summary.status == "damaged" and [(d.line, d.kind) for d in read.damage] == [
        (5, "unparsable")]
    assert read.summary.operations == 2 and read.summary.messages == 3


def test_unknown_event_types_are_counted_never_damage(tmp_path: Path) -> None:
    """Fixture: the real run's store plus three events of types OpenClaw may add later."""
    db = oc.build(tmp_path)
    for event in ({"type": "hologram", "id": "x"}, {"id": "no type"},
                  {"type": "message", "message": {"role": "narrator", "content": "?"}}):
        oc.append(db, oc.SESSION, event)
    s = OPENCLAW.read(_only(tmp_path)).summary
    assert (s.status, s.damage, s.unrecognized) == ("ok", 0, 2)


def test_a_compressed_event_reads_as_its_text(tmp_path: Path) -> None:
    """Fixture: the real run's store plus one assistant message stored as a zstd frame."""
    db = oc.build(tmp_path)
    long_text = "compressed " * 200
    oc.append(db, oc.SESSION, oc.message("assistant", long_text), compressed=True)
    read = OPENCLAW.read(_only(tmp_path))
    assert read.records[-1]["type"] == "message" and read.records[-1]["text"].startswith("compressed")


def test_a_session_id_failing_openclaws_rule_is_a_clear_error_and_the_others_are_listed(
        tmp_path: Path) -> None:
    """Fixture: the real run's store with a second window named '-bad/../x'."""
    db = oc.build(tmp_path)
    with oc.connect(db) as con:
        con.execute("INSERT INTO session_windows (session_id, session_key, created_at, updated_at) "
                    "VALUES ('-bad/../x', ?, 1, 1)", (oc.KEY,))
        for row in oc.fixture_rows("-bad/../x")[:3]:
            oc.add(con, row)
    counts = _import(tmp_path)
    assert counts.threads == 1 and counts.unreadable == 1
    [problem] = counts.problems.values()
    assert isinstance(problem, AgentLogUnreadable) and "fails OpenClaw's own id rule" in str(problem)
    assert not valid_session_id("-bad") and valid_session_id("1234") and valid_session_id(oc.SESSION)


def test_a_reset_window_names_the_session_that_superseded_it(tmp_path: Path) -> None:
    """Fixture: the real run's session, then a newer session id under the same key."""
    newer = "c0ffee00-1111-4222-8333-444455556666"
    db = oc.build(tmp_path, extra_windows=[newer])
    for row in oc.fixture_rows(newer)[:5]:
        with oc.connect(db) as con:
            oc.add(con, row)
    reads = {f.path.name.rpartition("#")[2]: OPENCLAW.read(f) for f in OPENCLAW.discover([tmp_path])}
    old = reads[oc.SESSION].meta
    assert old is not None and old["data"]["agent"]["superseded_by"] == newer
    assert old["data"]["agent"]["notes"] == [
        f"OpenClaw has since moved {oc.KEY} on to session {newer} (a reset, /new or a rollover); "
        "resuming this id continues the earlier transcript"]
    assert (reads[newer].meta or {})["data"]["agent"]["superseded_by"] is None


def test_a_corrupt_store_is_unreadable_and_another_agents_store_is_still_listed(tmp_path: Path) -> None:
    """Fixture: two agents' stores from the real run; the second's pages overwritten in the middle."""
    oc.build(tmp_path, agent="main")
    bad = oc.build(tmp_path, agent="ops", session="d0d0d0d0-1111-4222-8333-444455556666")
    data = bytearray(bad.read_bytes())
    data[4096:len(data) - 4096] = b"\xff" * (len(data) - 8192)
    bad.write_bytes(bytes(data))
    counts = _import(tmp_path)
    assert counts.threads == 1 and counts.unreadable == 1
    assert str(bad) in next(iter(counts.problems))


def test_a_store_of_another_users_permissions_is_an_error_and_the_rest_is_listed(tmp_path: Path) -> None:
    """Fixture: two agents' stores from the real run, one mode 000; the listing runs in a
    subprocess that may not read it (as root: with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
    dropped by util-linux's setpriv, so the mode bits hold for it as for another user)."""
    root = tmp_path / "state"
    oc.build(root, agent="main")
    locked = oc.build(root, agent="ops", session="d0d0d0d0-1111-4222-8333-444455556666")
    locked.chmod(0o000)
    drop = ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search", "--"] \
        if os.geteuid() == 0 else []
    before = tree_digest(root)

    def sk(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*drop, sys.executable, "-m", "sessionkeeper", *args, "--json",
                               "--agents", "openclaw", "--openclaw-home", str(root)],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg")})

    listed = sk("list")
    checked = sk("--check-resume", "d0d0d0d0-1111-4222-8333-444455556666")
    locked.chmod(0o644)
    assert listed.returncode == 0, listed.stderr
    assert [r["thread_id"] for r in orjson.loads(listed.stdout)] == [oc.SESSION]
    error = orjson.loads(checked.stdout or checked.stderr)
    assert checked.returncode == AgentLogUnreadable.exit_code, checked.stderr
    assert "agent_log_unreadable" in str(error) and "Permission denied" in str(error)
    locked.chmod(0o000)
    assert tree_digest(root) == before
    locked.chmod(0o644)


def test_a_legacy_jsonl_transcript_with_a_torn_tail_is_read_up_to_it(tmp_path: Path) -> None:
    """Fixture: the real run's events as a legacy `sessions/<id>.jsonl`, its last line cut."""
    sessions = tmp_path / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    lines = [row["event"] for row in oc.events()]
    (sessions / f"{oc.SESSION}.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])
    assert _import(tmp_path).threads == 1
    read = OPENCLAW.read(_only(tmp_path))
    assert read.summary.thread_id == oc.SESSION and read.summary.torn_tail
    assert read.tail is not None and read.tail.line == len(lines)


def test_resuming_names_openclaws_agent_and_session_ids() -> None:
    """No fixture: a window's path gives the agent id and session id OpenClaw resumes by."""
    path = f"/h/.openclaw/agents/ops/agent/openclaw-agent.sqlite#{oc.SESSION}"
    assert OPENCLAW.resume_command_of(oc.SESSION, path) == [
        "openclaw", "agent", "--local", "--agent", "ops", "--session-id", oc.SESSION,
        "--message-file", "/dev/stdin"]


@pytest.mark.parametrize("raw", ["", " ", "a" * 129, "x.checkpoint.0b1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e",
                                 "_lead", "a/b", "a#b"])
def test_openclaws_id_rule_refuses_what_it_refuses(raw: str) -> None:
    """No fixture: the ids OpenClaw's validateSessionId throws on."""
    assert not valid_session_id(raw)


def test_a_check_of_a_superseded_session_says_openclaw_moved_on_and_is_not_drift(
        tmp_path: Path) -> None:
    """Fixture: the real run's session in a real repository, then a newer session id under its
    key (what a daily or idle reset does); the check runs through the CLI."""
    from tests.conftest import init_repo

    repo = init_repo(tmp_path / "repo", {"README": "x\n"})
    newer = "c0ffee00-1111-4222-8333-444455556666"
    db = oc.build(tmp_path / "state", cwd=str(repo), extra_windows=[newer])
    with oc.connect(db) as con:
        for row in oc.fixture_rows(newer, cwd=str(repo))[:5]:
            oc.add(con, row)
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", "--check-resume", oc.SESSION,
                           "--workspace", str(repo), "--json", "--agents", "openclaw",
                           "--openclaw-home", str(tmp_path / "state")], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "XDG_DATA_HOME": str(tmp_path / "x")})
    report = orjson.loads(done.stdout)
    assert (done.returncode, report["verdict"], report["differences"]) == (0, "ok", [])
    assert any(f"on to session {newer}" in note for note in report["notes"])
