"""The store as a whole: permissions, one writer per thread, archive, fsck, a corrupt index, secrets."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import ThreadBusy
from sessionkeeper.store.reader import read_rollout

from ..seed import crash, record_seed

CANARIES = ["sk-proj-" + "Q" * 40, "ghp_" + "A" * 36, "AKIA" + "B" * 16,
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
            "hunter2-from-dotenv"]


@pytest.mark.parametrize("mask", [0o000, 0o022])
def test_store_files_are_private_under_any_umask(store_dir, repo, mask):
    """Fixture: a seed session written under umask 000 and 022."""
    old = os.umask(mask)
    try:
        session = record_seed(Keeper(store_dir), repo, close=True)
    finally:
        os.umask(old)
    for path in store_dir.rglob("*"):
        mode = path.stat().st_mode & 0o777
        if path.is_dir():
            assert mode == 0o700, path
        elif path.suffix in (".jsonl", ".db", ".lock") or path.name.startswith("state.db"):
            assert mode == 0o600, path
    assert session.path.startswith(str(store_dir))


def test_a_second_writer_on_the_same_thread_is_refused_and_the_log_stays_clean(store_dir, repo):
    """Fixture: a live seed session; another process tries to resume its thread."""
    keeper = Keeper(store_dir)
    session = record_seed(keeper, repo)
    script = textwrap.dedent(f"""
        import sys
        from sessionkeeper.api import Keeper
        from sessionkeeper.errors import ThreadBusy
        try:
            Keeper({str(store_dir)!r}).resume({session.thread_id!r}, workspace={str(repo)!r})
        except ThreadBusy as exc:
            print("busy:", exc); sys.exit(75)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 75, done.stderr
    assert "open for writing" in done.stdout
    with pytest.raises(ThreadBusy):
        Keeper(store_dir).resume(session.thread_id, workspace=str(repo))
    session.record({"type": "message", "role": "assistant", "text": "still here"})
    session.close()
    rollout = read_rollout(session.writer.path)
    assert rollout.damage == [] and rollout.tail is None
    assert len(list(store_dir.rglob("rollout-*.jsonl"))) == 1


def test_archive_moves_rollouts_and_unarchive_brings_them_back(store_dir, repo):
    """Fixture: a closed seed session."""
    keeper = Keeper(store_dir)
    thread = record_seed(keeper, repo, close=True).thread_id
    assert keeper.archive(thread) == 1
    assert keeper.rows() == []
    assert [t.archived for t in keeper.rows(include_archived=True)] == [True]
    assert list((store_dir / "archived_sessions").rglob("rollout-*.jsonl"))
    assert keeper.unarchive(thread) == 1
    assert [t.thread_id for t in keeper.rows()] == [thread]
    assert not list((store_dir / "archived_sessions").rglob("rollout-*.jsonl"))


def test_fsck_finds_and_repairs_every_kind_of_divergence(store_dir, repo, tmp_path):
    """Fixture: three closed threads; then a row deleted, a file deleted, a log truncated."""
    keeper = Keeper(store_dir)
    sessions = [record_seed(keeper, repo, close=True) for _ in range(3)]
    db = sqlite3.connect(store_dir / "state.db")
    db.execute("DELETE FROM sessions WHERE session_id=?", (sessions[0].session_id,))
    db.commit()
    db.close()
    os.remove(sessions[1].path)
    path = Path(sessions[2].path)
    data = path.read_bytes()
    cut = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[:cut])
    report = Keeper(store_dir).fsck()
    assert report.missing_rows == [sessions[0].session_id]
    assert report.dangling_rows == [sessions[1].session_id]
    assert report.ahead_rows == [sessions[2].session_id]
    assert not report.clean
    repaired = Keeper(store_dir).fsck(repair=True)
    assert repaired.repaired
    again = Keeper(store_dir).fsck()
    assert again.clean, again
    assert sorted(t.thread_id for t in Keeper(store_dir).rows()) == sorted(
        [sessions[0].thread_id, sessions[2].thread_id])


def test_fsck_reports_a_session_duplicated_in_two_files(store_dir, repo):
    """Fixture: a closed seed session whose rollout was copied into another day folder."""
    keeper = Keeper(store_dir)
    session = record_seed(keeper, repo, close=True)
    other = store_dir / "sessions" / "2001" / "01" / "01"
    other.mkdir(parents=True)
    shutil.copyfile(session.path, other / os.path.basename(session.path))
    assert keeper.fsck().duplicate_sessions == [session.session_id]


def test_a_corrupt_index_is_set_aside_and_rebuilt_when_listing(store_dir, repo):
    """Fixture: a closed seed session; state.db overwritten with garbage."""
    thread = record_seed(Keeper(store_dir), repo, close=True).thread_id
    for side in ("state.db-wal", "state.db-shm"):
        (store_dir / side).unlink(missing_ok=True)
    (store_dir / "state.db").write_bytes(b"this is not a database" * 100)
    assert [t.thread_id for t in Keeper(store_dir).rows()] == [thread]
    assert list(store_dir.glob("state.db.corrupt-*"))


def test_secrets_never_reach_any_file_of_the_store(store_dir, repo):
    """Fixture: a seed session whose events carry planted credential canaries."""
    keeper = Keeper(store_dir)
    session = record_seed(keeper, repo)
    session.record({"type": "message", "role": "user", "text": " ".join(CANARIES[:5])})
    session.record({"type": "operation", "operation_id": "op-env", "tool": "shell",
                    "status": "started", "args": {"cmd": "deploy", "password": CANARIES[5],
                                                  "headers": {"Authorization": "Bearer " + "z" * 30}}})
    crash(session)
    keeper.resume(session.thread_id, workspace=str(repo))[1].close()
    blob = b"".join(p.read_bytes() for p in store_dir.rglob("*") if p.is_file())
    for canary in CANARIES + ["z" * 30]:
        assert canary.encode() not in blob, canary[:12]
    assert b"[REDACTED:openai_key:" in blob and b"[REDACTED:password:" in blob


def test_resumed_and_forked_sessions_record_their_lineage(store_dir, repo):
    """Fixture: a closed seed session, resumed, then forked at an earlier seq."""
    keeper = Keeper(store_dir)
    first = record_seed(keeper, repo, close=True)
    report, second = keeper.resume(first.thread_id, workspace=str(repo))
    assert second.thread_id == first.thread_id and second.session_id != first.session_id
    assert second.writer.meta["resumed_from"] == first.session_id
    assert second.writer.meta["seq"] == report.restored_to_seq + 1
    second.close()
    fork = keeper.fork(first.thread_id, at_seq=4)
    assert fork.writer.meta["forked_from"] == {"thread_id": first.thread_id,
                                               "session_id": first.session_id, "seq": 4}
    assert fork.summary()["todos"]["total"] == 0  # todos were recorded after seq 4
    fork.close()


def test_an_index_that_fails_mid_query_is_rebuilt_and_asked_again(store_dir, repo):
    """Fixture: two closed threads; the root page of the listing's SQLite index overwritten."""
    keeper = Keeper(store_dir)
    threads = sorted(record_seed(keeper, repo, close=True).thread_id for _ in range(2))
    keeper.store.index().db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    keeper.store.index().close()
    db = store_dir / "state.db"
    with sqlite3.connect(db) as con:
        page = con.execute("SELECT rootpage FROM sqlite_master WHERE name='threads_recent'"
                           ).fetchone()[0]
    data = bytearray(db.read_bytes())
    data[(page - 1) * 4096: page * 4096] = b"\xa5" * 4096
    db.write_bytes(bytes(data))
    fresh = Keeper(store_dir)
    fresh.store.index()  # opens fine: the damage is only met by the listing query
    assert sorted(t.thread_id for t in fresh.rows()) == threads
    assert list(store_dir.glob("state.db.corrupt-*"))


def test_secrets_in_titles_and_secret_named_keys_never_reach_the_store(store_dir, repo):
    """Fixture: a session whose title carries a token and whose tool args carry DB_PASSWORD and
    GITHUB_TOKEN; closed, resumed, listed."""
    token = "ghp_" + "T" * 36
    keeper = Keeper(store_dir)
    session = keeper.start(repo, title=f"deploy with {token}")
    session.record({"type": "operation", "operation_id": "op-env", "tool": "shell",
                    "status": "started", "args": {"env": {"DB_PASSWORD": "hunter2-prod",
                                                          "GITHUB_TOKEN": "plain-looking-value"}}})
    session.close()
    keeper.resume(session.thread_id, workspace=str(repo))[1].close()
    keeper.rows()
    blob = b"".join(p.read_bytes() for p in store_dir.rglob("*") if p.is_file())
    for secret in (token, "hunter2-prod", "plain-looking-value"):
        assert secret.encode() not in blob, secret
    assert keeper.rows()[0].title.startswith("deploy with [REDACTED:github_token:")
