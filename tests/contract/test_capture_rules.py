"""Capture at record time: what a file_change keeps of a file's content, and of what came before.

Every test records through a real Session on a temp store over a real git repository (`repo`:
payment.py and test_payment.py committed on fix/payment) and reads back the rollout, the file
history and the blob files on disk.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import InvalidEvent
from sessionkeeper.recovery.subsystems.file_history import FileHistory
from sessionkeeper.session.live import Session
from sessionkeeper.store.blobs import BlobStore

from ..conftest import git

ORIGINAL = b"def charge(amount):\n    return amount\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def records(session: Session) -> list[dict[str, Any]]:
    """Every line of the session's rollout, as written."""
    session.flush()
    return [orjson.loads(line) for line in Path(session.path).read_bytes().splitlines()]


def file_changes(session: Session) -> list[dict[str, Any]]:
    """The file_change records of the session's rollout."""
    return [r for r in records(session) if r["type"] == "file_change"]


def blob_files(store: Path) -> set[str]:
    """The keys of every blob file under the store."""
    root = store / "blobs"
    return {p.parent.name + p.name for p in root.glob("??/*") if not p.name.startswith(".")}


@pytest.fixture
def keeper(store_dir: Path) -> Keeper:
    """A Keeper on the empty temp store `store_dir`."""
    return Keeper(store_dir)


def test_a_file_change_without_hashes_keeps_the_file_as_a_blob_before_it_is_acknowledged(
        keeper: Keeper, repo: Path, store_dir: Path) -> None:
    """Fixtures: `keeper`, `repo`; the agent rewrites payment.py and records it without hashes."""
    new = b"def charge(amount):\n    return round(amount, 2)\n"
    with keeper.start(repo) as session:
        (repo / "payment.py").write_bytes(new)
        session.record({"type": "file_change", "path": "payment.py"})
        assert BlobStore(store_dir).get(sha(new)) == new  # on disk once record() returned
        [change] = file_changes(session)
    assert change["after_hash"] == sha(new) and change["content"] == "stored"
    assert change["change"] == "modify" and change["before_content"] == "stored"


def test_the_first_change_of_a_tracked_file_keeps_its_content_at_the_baseline_commit(
        keeper: Keeper, repo: Path, store_dir: Path) -> None:
    """Fixtures: `keeper`, `repo` (payment.py committed as ORIGINAL); two agent edits."""
    with keeper.start(repo) as session:
        for text in (b"v1\n", b"v2\n"):
            (repo / "payment.py").write_bytes(text)
            session.record({"type": "file_change", "path": "payment.py"})
        first, second = file_changes(session)
    assert first["before_hash"] == sha(ORIGINAL)
    assert BlobStore(store_dir).get(sha(ORIGINAL)) == ORIGINAL
    assert "before_hash" not in second  # only the session's first change says what came before


def test_files_modified_or_untracked_at_start_are_seen_with_their_content(
        keeper: Keeper, repo: Path, store_dir: Path) -> None:
    """Fixtures: `keeper`, `repo` with payment.py edited but not committed and notes.txt untracked
    before the session starts; then the agent changes both."""
    dirty, notes = b"# the user's uncommitted work\n", b"scratch notes\n"
    (repo / "payment.py").write_bytes(dirty)
    (repo / "notes.txt").write_bytes(notes)
    with keeper.start(repo) as session:
        seen = {r["path"]: r for r in file_changes(session)}
        assert set(seen) == {"payment.py", "notes.txt"}
        assert all(r["change"] == "seen" and r["author"] == "external" for r in seen.values())
        for name in ("payment.py", "notes.txt"):
            (repo / name).write_bytes(b"agent\n")
            session.record({"type": "file_change", "path": name})
        changes = {r["path"]: r for r in file_changes(session) if r.get("change") != "seen"}
        history = session.state.get(FileHistory)
    assert changes["payment.py"]["before_hash"] == sha(dirty)  # not the committed content
    assert changes["notes.txt"]["before_hash"] == sha(notes)
    assert BlobStore(store_dir).get(sha(dirty)) == dirty
    assert history.summary() == {"files": 2, "versions": 2}  # seen is no version


def test_a_file_name_that_is_not_utf8_is_skipped_at_start_and_the_others_are_seen(
        keeper: Keeper, repo: Path) -> None:
    """Fixtures: `keeper`, `repo` with notes.txt and a file named b"bad\\xff.txt" untracked."""
    (repo / "notes.txt").write_bytes(b"scratch notes\n")
    with open(os.path.join(os.fsencode(repo), b"bad\xff.txt"), "wb") as f:
        f.write(b"x")
    with keeper.start(repo) as session:
        assert [r["path"] for r in file_changes(session)] == ["notes.txt"]


def test_many_files_seen_at_start_are_each_stored_and_recorded_in_the_scans_order(
        keeper: Keeper, repo: Path, store_dir: Path) -> None:
    """Fixtures: `keeper`, `repo` with 40 untracked files of distinct content before the session
    starts (a batch large enough to be captured by several threads)."""
    contents = {f"notes/n{i:02d}.txt": f"note {i}\n".encode() * (i + 1) for i in range(40)}
    (repo / "notes").mkdir()
    for name, data in contents.items():
        (repo / name).write_bytes(data)
    with keeper.start(repo) as session:
        seen = [r for r in file_changes(session) if r.get("change") == "seen"]
    assert [r["path"] for r in seen] == sorted(contents)
    assert [r["seq"] for r in seen] == sorted(r["seq"] for r in seen)
    blobs = BlobStore(store_dir)
    for record in seen:
        assert record["after_hash"] == sha(contents[record["path"]])
        assert record["content"] == "stored"
        assert blobs.get(record["after_hash"]) == contents[record["path"]]


def test_a_new_file_is_created_but_an_ignored_one_has_no_known_past(
        keeper: Keeper, repo: Path) -> None:
    """Fixtures: `keeper`, `repo` with a .gitignore for build/; the agent writes new.py and
    build/out.txt, neither there when the session started."""
    (repo / ".gitignore").write_text("build/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore build")
    with keeper.start(repo) as session:
        (repo / "new.py").write_text("print('new')\n")
        (repo / "build").mkdir()
        (repo / "build" / "out.txt").write_text("artifact\n")
        session.record_many([{"type": "file_change", "path": "new.py"},
                             {"type": "file_change", "path": "build/out.txt"}])
        new, ignored = file_changes(session)
    assert new["change"] == "create" and "before_hash" not in new
    assert "change" not in ignored and "before_hash" not in ignored  # may have existed, unseen


@pytest.mark.parametrize(("name", "data", "reason"), [
    ("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "binary"),
    ("big.txt", b"x" * 5000, "too_large"),
    (".env", b"API_TOKEN=abc\n", "secret_file"),
    ("id_rsa", b"-----BEGIN OPENSSH PRIVATE KEY-----\n", "secret_file"),
])
def test_binary_oversized_and_secret_files_are_kept_by_hash_only(
        store_dir: Path, repo: Path, name: str, data: bytes, reason: str) -> None:
    """Fixtures: `store_dir`, `repo`; a Keeper with a 4 KB content limit; the agent writes `name`."""
    with Keeper(store_dir, content_limit_bytes=4096).start(repo) as session:
        (repo / name).write_bytes(data)
        session.record({"type": "file_change", "path": name})
        [change] = file_changes(session)
        version = session.state.get(FileHistory).last(name)
    assert change["after_hash"] == sha(data) and change["content"] == reason
    assert version is not None and version["content"] == reason
    assert sha(data) not in blob_files(store_dir)


def test_secret_files_are_kept_when_allowed(store_dir: Path, repo: Path) -> None:
    """Fixtures: `store_dir`, `repo`; a Keeper that allows secret files; the agent writes .env."""
    with Keeper(store_dir, allow_secret_files=True).start(repo) as session:
        (repo / ".env").write_bytes(b"API_TOKEN=abc\n")
        session.record({"type": "file_change", "path": ".env"})
        [change] = file_changes(session)
    assert change["content"] == "stored"
    assert BlobStore(store_dir).get(change["after_hash"]) == b"API_TOKEN=abc\n"


def test_redaction_never_touches_file_content(keeper: Keeper, repo: Path, store_dir: Path) -> None:
    """Fixtures: `keeper`, `repo`; the agent writes a config module holding a token-shaped string."""
    token = b"ghp_" + b"A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    data = b"GITHUB_TOKEN = '" + token + b"'\n"
    with keeper.start(repo) as session:
        (repo / "config.py").write_bytes(data)
        session.record({"type": "file_change", "path": "config.py"})
        session.record({"type": "message", "role": "user", "text": f"use {token.decode()}"})
        rollout = Path(session.path).read_bytes()
    assert BlobStore(store_dir).get(sha(data)) == data  # byte for byte
    assert token not in rollout  # while event text is redacted


def test_content_passed_explicitly_is_kept_and_seen_content_becomes_the_version_before(
        keeper: Keeper, repo: Path, store_dir: Path) -> None:
    """Fixtures: `keeper`, `repo`; a harness that holds the content itself: it reports what an
    untracked file held before its edit (`seen`), then the edit, both as bytes."""
    with keeper.start(repo) as session:
        session.record_file("draft.md", content=b"first draft\n", seen=True)
        session.record_file("draft.md", content=b"second draft\n")
        seen, change = file_changes(session)
    assert seen["change"] == "seen" and seen["after_hash"] == sha(b"first draft\n")
    assert change["before_hash"] == sha(b"first draft\n") and change["content"] == "stored"
    assert BlobStore(store_dir).get(sha(b"second draft\n")) == b"second draft\n"
    assert not (repo / "draft.md").exists()  # nothing was read from disk


def test_a_record_with_hashes_does_no_blob_work(keeper: Keeper, repo: Path, store_dir: Path) -> None:
    """Fixtures: `keeper`, `repo`; a writer that hashes the file itself."""
    (repo / "payment.py").write_bytes(b"v1\n")
    with keeper.start(repo) as session:
        before = blob_files(store_dir)  # (the scan kept payment.py as seen)
        session.record({"type": "file_change", "path": "payment.py", "after_hash": sha(b"v1\n")})
        assert blob_files(store_dir) == before
        [*_, change] = file_changes(session)
        version = session.state.get(FileHistory).last("payment.py")
    assert "content" not in change and version is not None and version["content"] == "not_captured"


def test_clients_cannot_write_rewind_versions_nor_claim_blobs_that_are_not_there(
        keeper: Keeper, repo: Path) -> None:
    """Fixtures: `keeper`, `repo`."""
    with keeper.start(repo) as session:
        with pytest.raises(InvalidEvent, match="written by Session Keeper itself"):
            session.record({"type": "file_change", "path": "payment.py", "author": "rewind",
                            "after_hash": sha(b"x")})
        with pytest.raises(InvalidEvent, match="no blob holds after_hash"):
            session.record({"type": "file_change", "path": "payment.py", "after_hash": sha(b"x"),
                            "content": "stored"})
        with pytest.raises(InvalidEvent, match="rewind lifecycle"):
            session.record_own([{"type": "lifecycle", "source": "rewind", "reason": "no info"}])


def test_resume_sees_files_changed_between_sessions(keeper: Keeper, repo: Path) -> None:
    """Fixtures: `keeper`, `repo`; a first session ends, the user creates todo.txt, then the
    thread is resumed and the agent edits todo.txt."""
    session = keeper.start(repo)
    thread = session.thread_id
    session.close()
    (repo / "todo.txt").write_bytes(b"user's list\n")
    _, resumed = keeper.resume(thread, workspace=str(repo), decision="continue")
    assert resumed is not None
    with resumed:
        (repo / "todo.txt").write_bytes(b"agent's list\n")
        resumed.record({"type": "file_change", "path": "todo.txt"})
        seen, change = [r for r in file_changes(resumed)]
    assert seen["change"] == "seen" and change["before_hash"] == sha(b"user's list\n")
    assert change["change"] == "modify"


def test_a_workspace_whose_path_is_redacted_is_never_read_as_all_files_deleted(
        store_dir: Path, tmp_path: Path) -> None:
    """Fixture: a git repository at a path that looks like an API key (`sk-…`), so the recorded
    cwd is redacted; the session that started it, then a re-attached one (as `record` does)."""
    from ..conftest import init_repo

    repo = init_repo(tmp_path / ("sk-" + "A1b2C3d4" * 4), {"app.py": "v0\n"})
    keeper = Keeper(store_dir)
    with keeper.start(repo) as session:
        assert "[REDACTED" in session.writer.meta["cwd"]
        (repo / "app.py").write_bytes(b"v1\n")
        session.record({"type": "file_change", "path": "app.py"})
        [change] = file_changes(session)
        assert change["after_hash"] == sha(b"v1\n") and not change.get("deleted")
        session_id = session.session_id
    attached = keeper.attach(session_id)
    with attached, pytest.raises(InvalidEvent, match="is not a directory here"):
        attached.record({"type": "file_change", "path": "app.py"})
