"""Issue 14 end to end through the real `sessionkeeper` CLI: record, diff, rewind, force, undo,
hash-only files, missing and corrupt blobs, fsck and gc — real processes, files and git."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from sessionkeeper.store.blobs import BlobStore

from ..conftest import git
from ..rewind_files import REFUND, USER, V1, V2, sha


def cli(store: Path, *args: str, stdin: str = "",
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m sessionkeeper ARGS --store STORE` as a real process."""
    return subprocess.run([sys.executable, "-m", "sessionkeeper", *args, "--store", str(store)],
                          input=stdin, capture_output=True, text=True, timeout=60, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1"})


def cli_json(store: Path, *args: str, code: int = 0, **kw: Any) -> Any:
    """Run the CLI with --json; assert the exit code; return the parsed output."""
    done = cli(store, *args, "--json", **kw)
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    return orjson.loads(done.stdout)


def record(store: Path, session: str, *events: dict[str, Any], args: tuple[str, ...] = ()) -> list[int]:
    """`sessionkeeper record` the events; return their seqs."""
    done = cli(store, "record", "--session", session, *args,
               stdin="".join(orjson.dumps(e).decode() + "\n" for e in events))
    assert done.returncode == 0, done.stderr
    return [orjson.loads(line)["seq"] for line in done.stdout.splitlines()]


def change(path: str) -> dict[str, Any]:
    """A file_change without hashes: read the file now."""
    return {"type": "file_change", "path": path, "author": "agent"}


def disk(root: Path) -> dict[str, bytes]:
    """Every file under `root` outside .git."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


@dataclass
class Story:
    """Two agent turns over three tracked files, a created and a deleted one, then a user edit."""

    store: Path
    repo: Path
    thread: str
    session: str
    early: int  # the last seq of turn 1
    baseline: dict[str, bytes]


@pytest.fixture
def story(store_dir: Path, repo: Path) -> Story:
    """`repo` plus ledger.py and old.py committed; a CLI thread where turn 1 writes V1 of the
    three files, turn 2 writes V2, creates refund.py and deletes old.py, tests pass; then the
    user edits test_payment.py outside the session."""
    (repo / "ledger.py").write_bytes(b"ENTRIES = None\n")
    (repo / "old.py").write_bytes(b"# obsolete\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "ledger")
    baseline = disk(repo)
    started = cli_json(store_dir, "start", "--workspace", str(repo))
    session = started["session_id"]
    for name, data in V1.items():
        (repo / name).write_bytes(data)
    *_, early = record(store_dir, session, {"type": "message", "role": "user", "text": "fix"},
                       *(change(n) for n in V1))
    for name, data in V2.items():
        (repo / name).write_bytes(data)
    (repo / "refund.py").write_bytes(REFUND)
    (repo / "old.py").unlink()
    record(store_dir, session, *(change(n) for n in [*V2, "refund.py", "old.py"]),
           {"type": "verifier", "kind": "tests", "passed": 9, "total": 9})
    (repo / "test_payment.py").write_bytes(USER)
    return Story(store_dir, repo, started["thread_id"], session, early, baseline)


def test_rewind_story_restores_refuses_forces_and_undoes_through_the_cli(story: Story) -> None:
    """Fixture: `story`."""
    s, repo = story.store, story.repo
    diffs = cli_json(s, "diff", story.thread)
    assert {(d["path"], d["author"]) for d in diffs} >= {("payment.py", "agent"), ("old.py", "agent")}
    assert all(d["diff"] for d in diffs)

    before = disk(repo)
    planned = cli_json(s, "rewind", story.thread, "--to", str(story.early), "--dry-run", code=1)
    assert {r["path"]: r["action"] for r in planned["steps"]} == {
        "payment.py": "restore", "ledger.py": "restore", "test_payment.py": "refused",
        "refund.py": "delete", "old.py": "restore"}
    assert disk(repo) == before and planned["rewind_seq"] is None

    done = cli_json(s, "rewind", story.thread, "--to", str(story.early), code=1)
    assert {r["path"]: r["outcome"] for r in done["steps"]} == {
        "payment.py": "written", "ledger.py": "written", "test_payment.py": "skipped",
        "refund.py": "deleted", "old.py": "written"}
    now = disk(repo)
    assert now["payment.py"] == V1["payment.py"] and now["ledger.py"] == V1["ledger.py"]
    assert now["test_payment.py"] == USER and "refund.py" not in now
    assert now["old.py"] == story.baseline["old.py"]

    forced = cli_json(s, "rewind", story.thread, "--to", str(story.early), "--path",
                      "test_payment.py", "--force")
    assert forced["steps"][0]["outcome"] == "written"
    assert (repo / "test_payment.py").read_bytes() == V1["test_payment.py"]
    assert BlobStore(s).get(sha(USER)) == USER  # the user's work is kept, and referenced:
    assert cli_json(s, "fsck")["clean"] is True

    undone = cli_json(s, "rewind", story.thread, "--undo")  # the forced rewind first
    assert undone["undo_of"] == forced["rewind_seq"]
    assert (repo / "test_payment.py").read_bytes() == USER
    cli_json(s, "rewind", story.thread, "--undo")  # then the first one
    assert disk(repo) == before
    nothing = cli(s, "rewind", story.thread, "--undo")
    assert nothing.returncode == 65 and "no rewind" in nothing.stderr

    check = cli_json(s, "--check-resume", story.thread, "--workspace", str(repo), code=0)
    assert not [d for d in check["differences"] if d["kind"].startswith("file_")]
    assert any(i["subsystem"] == "verifier" and "stale" in i["reason"]
               for i in check["invalidated"])


def test_rewind_to_before_the_session_restores_the_baseline_and_deletes_created_files(
        story: Story) -> None:
    """Fixture: `story`; a rewind of every file to seq 0 with --force."""
    cli_json(story.store, "rewind", story.thread, "--to", "0", "--force")
    assert disk(story.repo) == story.baseline


def test_binary_and_oversized_files_are_reported_not_restored(store_dir: Path, repo: Path) -> None:
    """Fixtures: `store_dir`, `repo`; the agent writes a PNG and a 4 KB text file twice each,
    recorded with a 1 KB content limit."""
    started = cli_json(store_dir, "start", "--workspace", str(repo))
    marks = []
    for round_ in (1, 2):
        (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0" + bytes([round_]) * 64)
        (repo / "big.txt").write_bytes(str(round_).encode() * 4096)
        marks += record(store_dir, started["session_id"], change("logo.png"), change("big.txt"),
                        args=("--content-limit", "1K"))
    out = cli_json(store_dir, "rewind", started["thread_id"], "--to", str(marks[1]), code=1)
    steps = {r["path"]: r for r in out["steps"]}
    assert steps["logo.png"]["action"] == "unavailable" and "binary" in steps["logo.png"]["reason"]
    assert steps["big.txt"]["action"] == "unavailable" and "too_large" in steps["big.txt"]["reason"]
    assert (repo / "logo.png").read_bytes().endswith(bytes([2]) * 64)
    assert (repo / "big.txt").read_bytes() == b"2" * 4096


def test_missing_and_corrupt_blobs_are_reported_by_fsck_and_refused_by_rewind(
        store_dir: Path, repo: Path) -> None:
    """Fixtures: `store_dir`, `repo`; the agent writes a.py, b.py and c.py twice each; then the
    blob of a.py's first version is deleted and b.py's is overwritten with garbage."""
    started = cli_json(store_dir, "start", "--workspace", str(repo))
    texts = {n: [f"{n} first {'x' * 300}\n".encode(), f"{n} second {'y' * 300}\n".encode()]
             for n in ("a.py", "b.py", "c.py")}
    marks = []
    for version in (0, 1):
        for name, pair in texts.items():
            (repo / name).write_bytes(pair[version])
        *_, last = record(store_dir, started["session_id"], *(change(n) for n in texts))
        marks.append(last)
    blobs = BlobStore(store_dir)
    (blobs.root / sha(texts["a.py"][0])[:2] / sha(texts["a.py"][0])[2:]).unlink()
    corrupt = blobs.root / sha(texts["b.py"][0])[:2] / sha(texts["b.py"][0])[2:]
    corrupt.write_bytes(corrupt.read_bytes()[:5] + b"\0garbage" * 8)

    report = cli_json(store_dir, "fsck", code=1)
    assert sha(texts["a.py"][0]) in {b["blob"] for b in report["blobs_missing"]}
    assert sha(texts["b.py"][0]) in {b["blob"] for b in report["blobs_corrupt"]}
    assert all(b["sessions"] == [started["session_id"]] for b in report["blobs_missing"])

    out = cli_json(store_dir, "rewind", started["thread_id"], "--to", str(marks[0]), code=1)
    steps = {r["path"]: r for r in out["steps"]}
    assert steps["a.py"]["action"] == "unavailable" and "blob_missing" in steps["a.py"]["reason"]
    assert steps["b.py"]["action"] == "unavailable" and "blob_corrupt" in steps["b.py"]["reason"]
    assert steps["c.py"]["outcome"] == "written"
    assert (repo / "a.py").read_bytes() == texts["a.py"][1]  # untouched, never garbage
    assert (repo / "b.py").read_bytes() == texts["b.py"][1]
    assert (repo / "c.py").read_bytes() == texts["c.py"][0]


def _age_blobs(store: Path, seconds: float) -> None:
    """Make every blob file look `seconds` old (gc spares young blobs)."""
    then = time.time() - seconds
    for path in (store / "blobs").glob("??/*"):
        os.utime(path, (then, then))


def test_gc_removes_unreferenced_blobs_and_never_what_a_live_thread_needs(
        store_dir: Path, repo: Path, tmp_path: Path) -> None:
    """Fixtures: `store_dir`, `repo`; a live thread with three versions of payment.py, an archived
    thread in another repo, and one orphan blob; every blob two hours old."""
    live = cli_json(store_dir, "start", "--workspace", str(repo))
    versions = [f"v{i} {'z' * 200}\n".encode() for i in range(3)]
    for data in versions:
        (repo / "payment.py").write_bytes(data)
        record(store_dir, live["session_id"], change("payment.py"))
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    archived = cli_json(store_dir, "start", "--workspace", str(other))
    (other / "notes.txt").write_bytes(b"archived notes\n")
    record(store_dir, archived["session_id"], change("notes.txt"))
    assert cli(store_dir, "archive", archived["thread_id"]).returncode == 0
    orphan = BlobStore(store_dir).put(b"nobody names me\n")
    _age_blobs(store_dir, 7200)

    dry = cli_json(store_dir, "gc", "--dry-run")
    assert dry["removed"] == [orphan] and orphan in BlobStore(store_dir)
    first = cli_json(store_dir, "gc")
    assert first["removed"] == [orphan] and orphan not in BlobStore(store_dir)
    assert sha(b"archived notes\n") in BlobStore(store_dir)  # archive keeps its blobs

    capped = cli_json(store_dir, "gc", "--cap", "1")
    store = BlobStore(store_dir)
    assert sha(versions[-1]) in store  # the live thread's latest version
    assert sha(b"def charge(amount):\n    return amount\n") in store  # and its before
    assert capped["over_cap"] is True and set(capped["expired"]) <= {
        sha(versions[0]), sha(versions[1]), sha(b"archived notes\n")}
    assert cli_json(store_dir, "rewind", live["thread_id"], "--to", "0")["complete"] is True


def test_a_rewind_of_a_workspace_moved_away_writes_nothing_and_says_so(story: Story) -> None:
    """Fixture: `story`, its repository then moved to another directory; a rewind of old.py (which
    the agent deleted, so nothing on disk looks changed) to before its deletion."""
    moved = story.repo.with_name("repo-moved")
    story.repo.rename(moved)
    done = cli(story.store, "rewind", story.thread, "--to", str(story.early), "--path", "old.py")
    assert done.returncode == 64, (done.stdout, done.stderr)
    assert "not a directory" in done.stderr
    assert not story.repo.exists() and not (moved / "old.py").exists()


@pytest.mark.parametrize("archive_fork", [False, True])
def test_gc_keeps_every_version_a_fork_names_after_its_parent_is_deleted(
        store_dir: Path, repo: Path, archive_fork: bool) -> None:
    """Fixtures: `store_dir`, `repo`; a thread with three versions of payment.py forked (the fork
    names them in its snapshot only), the fork archived or not, the parent deleted, every blob
    two hours old; the real `sessionkeeper gc`."""
    from sessionkeeper.api import Keeper

    parent = cli_json(store_dir, "start", "--workspace", str(repo))
    versions = [f"v{i} {'z' * 200}\n".encode() for i in range(3)]
    seqs = []
    for data in versions:
        (repo / "payment.py").write_bytes(data)
        seqs += record(store_dir, parent["session_id"], change("payment.py"))
    fork = cli_json(store_dir, "fork", parent["thread_id"])
    if archive_fork:
        assert cli(store_dir, "archive", fork["thread_id"]).returncode == 0
    assert Keeper(store_dir).delete(parent["thread_id"]) == 1
    _age_blobs(store_dir, 7200)

    assert cli_json(store_dir, "gc")["removed"] == []
    store = BlobStore(store_dir)
    assert all(sha(data) in store for data in versions)
    assert sha(b"def charge(amount):\n    return amount\n") in store
    if archive_fork:
        assert cli(store_dir, "unarchive", fork["thread_id"]).returncode == 0
    assert cli_json(store_dir, "rewind", fork["thread_id"], "--to", str(seqs[0]))["complete"] is True
    assert (repo / "payment.py").read_bytes() == versions[0]
