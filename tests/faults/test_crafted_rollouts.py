"""Crafted rollouts (valid CRCs, wrong shapes) beside a good thread: each is reported for its own
file, and reindex, fsck, list, show and --check-resume keep working for every other thread
(issue 12 item 10, reliability.md §4.5 B4)."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest

from sessionkeeper import ids
from sessionkeeper.api import Keeper
from sessionkeeper.store.reader import read_rollout
from sessionkeeper.store.store import Store

SERVER = Path(__file__).resolve().parents[2] / "server"
TS = "2026-11-29T10:00:00.000Z"
Crafted = tuple[Path, str, dict[str, tuple[str, bytes]]]  # store, good thread, name -> (sid, bytes)


def crafted_line(seq: object, body: dict) -> bytes:
    """A line whose CRC is right for whatever it says (an attacker's or a buggy tool's line)."""
    core = b'{"seq":%s,"ts":"%s",%s' % (orjson.dumps(seq), TS.encode(), orjson.dumps(body)[1:-1])
    return b'%s,"crc":"%08x"}\n' % (core, zlib.crc32(core))


def raw_line(core: bytes) -> bytes:
    """A line from hand-written JSON (for literals orjson cannot write), CRC appended."""
    return b'%s,"crc":"%08x"}\n' % (core, zlib.crc32(core))


def meta(cwd: str, **fields: object) -> tuple[str, dict]:
    """A session_meta body of a fresh thread in `cwd`, with `fields` overriding."""
    sid = ids.new_id()
    return sid, {"type": "session_meta", "schema_version": 2, "thread_id": ids.new_id(),
                 "session_id": sid, "cwd": cwd, "source": "startup", **fields}


def msg(n: int) -> dict:
    """A message body."""
    return {"type": "message", "role": "user", "text": f"crafted {n}"}


def _crafted_files(cwd: str) -> dict[str, tuple[str, bytes]]:
    """name -> (session id, file bytes): the shapes of issue 12 item 10 and a few more."""
    out: dict[str, tuple[str, bytes]] = {}
    sid, m = meta(cwd, baseline="x")
    out["baseline_x"] = sid, crafted_line(0, m) + crafted_line(1, msg(1))
    sid, m = meta(cwd)
    out["seq_2_63_last"] = sid, crafted_line(0, m) + crafted_line(1, msg(1)) + crafted_line(
        2**63, msg(2))
    sid, m = meta(cwd)
    out["seq_string_middle"] = sid, (crafted_line(0, m) + crafted_line(1, msg(1))
                                     + crafted_line("7", msg(2)) + crafted_line(3, msg(3)))
    sid, m = meta(cwd)
    out["meta_seq_string"] = sid, crafted_line("7", m) + crafted_line(8, msg(8))
    sid, m = meta(cwd)
    big = (b'{"seq":2,"ts":"%s","type":"operation","operation_id":"op-1","tool":"calc",'
           b'"status":"committed","result":{"n":123456789012345678901234567890}' % TS.encode())
    out["big_int"] = sid, crafted_line(0, m) + crafted_line(1, msg(1)) + raw_line(big) + (
        crafted_line(3, msg(3)))
    sid, m = meta(cwd, forked_from={"thread_id": "x", "session_id": 3, "seq": "1"})
    out["forked_from_garbage"] = sid, crafted_line(0, m)
    sid, m = meta(cwd, title=["not", "a", "title"], permissions="all")
    out["title_list"] = sid, crafted_line(0, m)
    sid, m = meta(cwd)
    snapshot = {"type": "snapshot", "through_seq": 1, "state": "x"}
    out["snapshot_state_string"] = sid, crafted_line(0, m) + crafted_line(1, msg(1)) + (
        crafted_line(2, snapshot))
    sid, m = meta(cwd, seq_claim=True)
    out["seq_true"] = sid, crafted_line(0, m) + crafted_line(True, msg(1))
    return out


@pytest.fixture
def crafted_store(store_dir: Path, repo: Path) -> Crafted:
    """A store with one good thread (recorded through the API) and every crafted file beside it."""
    keeper = Keeper(store_dir)
    session = keeper.start(repo, title="good thread")
    for n in range(3):
        session.record({"type": "message", "role": "user", "text": f"good {n}"})
    session.close()
    layout = Store(store_dir).layout
    files = _crafted_files(str(repo))
    for n, (sid, data) in enumerate(files.values()):
        path = layout.new_rollout_path(sid, datetime(2026, 11, 1 + n, tzinfo=timezone.utc))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (store_dir / "state.db").unlink()  # the next reader rebuilds the index from all of them
    for suffix in ("-wal", "-shm"):
        Path(f"{store_dir}/state.db{suffix}").unlink(missing_ok=True)
    return store_dir, session.thread_id, files


def test_crafted_rollouts_are_reported_and_never_stop_the_other_threads(crafted_store: Crafted,
                                                                        repo: Path) -> None:
    """Fixture: crafted_store (a good thread and nine crafted rollouts)."""
    store_dir, good, files = crafted_store
    keeper = Keeper(store_dir)
    counts = keeper.reindex()
    unindexable = {"baseline_x", "meta_seq_string", "forked_from_garbage", "title_list"}
    assert counts["unindexable"] == len(unindexable)
    listed = {row.thread_id for row in keeper.rows(include_archived=True)}
    assert good in listed and len(listed) == 1 + len(files) - len(unindexable)
    report = keeper.fsck()
    reasons = {Path(u["path"]).name: u["reason"] for u in report.unindexable}
    assert len(reasons) == len(unindexable)
    assert any("baseline is not an object" in r for r in reasons.values())
    assert any("seq is not an integer" in r for r in reasons.values())
    damaged = {d["session_id"] for d in report.damaged}
    for name in ("seq_2_63_last", "seq_string_middle", "big_int", "seq_true",
                 "snapshot_state_string"):
        assert files[name][0] in damaged, name
    assert keeper.check_resume(good, workspace=str(repo)).verdict == "ok"
    assert len(keeper.replay(good).state["context"].conversation()) == 3


@pytest.mark.parametrize("name", ["seq_2_63_last", "seq_string_middle", "big_int", "seq_true",
                                  "snapshot_state_string"])
def test_a_crafted_thread_that_is_listed_reads_as_damaged_not_a_crash(crafted_store: Crafted, repo: Path,
                                                                      name: str) -> None:
    """Fixture: crafted_store; one listed crafted thread resumed as a dry run."""
    store_dir, _good, files = crafted_store
    keeper = Keeper(store_dir)
    sid = files[name][0]
    path = keeper.store.session_path(sid)
    meta = read_rollout(path).meta
    assert meta is not None
    thread = meta["thread_id"]
    report = keeper.check_resume(thread, workspace=str(repo))
    assert report.verdict == "blocked" and report.damaged, report


def test_big_integers_never_become_floats_on_read(crafted_store: Crafted) -> None:
    """Fixture: crafted_store; the operation with a 30-digit integer literal."""
    store_dir, _good, files = crafted_store
    path = Keeper(store_dir).store.session_path(files["big_int"][0])
    rollout = read_rollout(path)
    assert [(d.line, d.kind) for d in rollout.damage] == [(3, "int_range")]
    assert all(r["type"] != "operation" for r in rollout.records)


@pytest.mark.parametrize("argv", [["reindex"], ["fsck"], ["list", "--all"], ["list", "--json"]])
def test_the_cli_survives_a_store_of_crafted_rollouts(crafted_store: Crafted, argv: list[str]) -> None:
    """Fixture: crafted_store; the real CLI in a child process."""
    store_dir, good, _files = crafted_store
    env = {**os.environ, "PYTHONPATH": str(SERVER)}
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", "--store", str(store_dir), *argv],
                          capture_output=True, text=True, env=env, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), (done.returncode, done.stderr)  # fsck: 1 = problems found
    if argv[0] == "list":
        assert good in done.stdout


def test_show_and_check_resume_of_the_good_thread_work_beside_crafted_files(crafted_store: Crafted,
                                                                            repo: Path) -> None:
    """Fixture: crafted_store; `show` and `--check-resume` of the good thread through the CLI."""
    store_dir, good, _files = crafted_store
    env = {**os.environ, "PYTHONPATH": str(SERVER)}
    for argv in (["show", good], ["--check-resume", good, "--workspace", str(repo)]):
        done = subprocess.run([sys.executable, "-m", "sessionkeeper", "--store", str(store_dir),
                               *argv], capture_output=True, text=True, env=env, timeout=120)
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == 0, (argv, done.returncode, done.stdout, done.stderr)
