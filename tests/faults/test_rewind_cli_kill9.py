"""A real `kill -9` of `sessionkeeper rewind` (the CLI process) while it rewrites 60 files.

Each trial records a thread through the API (60 files of 128 KB created at one seq, rewritten at
the next), starts `sessionkeeper rewind THREAD --to <first seq>`, waits until the rewind's begin
record is in the rollout, then SIGKILLs it at a random moment within the time a whole execution
takes (measured first, uncut). After the kill every file must hash to its old or its new content;
a begin record without its end must be reported by `--check-resume`; and a second run of the same
command must finish the job: every file restored, no temp file left, no file drift, nothing
reported as interrupted. `SK_REWIND_CLI_KILL9_TRIALS` (default 4) and `SK_REWIND_CLI_KILL9_SEED`
override the defaults; the seed is in every failure message.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from sessionkeeper.api import Keeper

from ..conftest import init_repo

TRIALS = int(os.environ.get("SK_REWIND_CLI_KILL9_TRIALS", "4"))
SEED = int(os.environ.get("SK_REWIND_CLI_KILL9_SEED", random.SystemRandom().randrange(2**32)))
FILES, SIZE = 60, 128 * 1024


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _content(rng: random.Random, tag: str) -> bytes:
    """Text, distinct at every line: a torn file matches neither version."""
    line = f"{tag} {rng.randrange(10**9)} " + "x" * 50 + "\n"
    return (line * (SIZE // len(line) + 1)).encode()[:SIZE]


def _setup(base: Path, rng: random.Random) -> tuple[Path, Path, str, int, dict[str, bytes], dict[str, bytes]]:
    """A repo and a store holding a thread whose files went from `old` (seq `to`) to `new`."""
    workspace = init_repo(base / "ws", {"README.md": "kill -9 trial\n"})
    store = base / "store"
    old = {f"src/m{i:03d}.py": _content(rng, f"old{i}") for i in range(FILES)}
    new = {p: _content(rng, f"new{i}") for i, p in enumerate(old)}
    (workspace / "src").mkdir()
    with Keeper(store).start(workspace) as session:
        for versions in (old, new):
            for path, data in versions.items():
                (workspace / path).write_bytes(data)
            acks = session.record_many([{"type": "file_change", "path": p} for p in versions])
            if versions is old:
                to = acks[-1].seq
        thread = session.thread_id
    return workspace, store, thread, to, old, new


def _cli(store: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "sessionkeeper", *args, "--store", str(store),
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _begun(store: Path) -> bool:
    """True once a rewind begin record is in a rollout of the store."""
    return any(b'"stage":"begin"' in p.read_bytes() for p in store.glob("sessions/**/*.jsonl"))


def _run(store: Path, thread: str, to: int, kill_after: float | None) -> tuple[int | None, float]:
    """Run the rewind; SIGKILL it `kill_after` s after its begin record appeared.

    Returns (exit code or None when killed, seconds from the begin record to the end).
    """
    child = _cli(store, "rewind", thread, "--to", str(to))
    deadline = time.monotonic() + 60
    while not _begun(store):
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        assert time.monotonic() < deadline, "no begin record within 60 s"
        time.sleep(0.002)
    began = time.monotonic()
    if kill_after is None:
        child.communicate(timeout=120)
        return child.returncode, time.monotonic() - began
    time.sleep(kill_after)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    return (None if child.returncode == -signal.SIGKILL else child.returncode), kill_after


def _check_resume(store: Path, thread: str, workspace: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "sessionkeeper", "--check-resume", thread,
                           "--workspace", str(workspace), "--store", str(store), "--json"],
                          capture_output=True, timeout=60)
    return orjson.loads(done.stdout)


def test_kill9_of_the_rewind_cli_leaves_files_old_or_new_and_a_rerun_finishes(tmp_path: Path) -> None:
    """Fixture: per trial, a fresh git workspace and store (see the module docstring)."""
    rng = random.Random(SEED)
    _, store, thread, to, _, _ = _setup(tmp_path / "measure", rng)
    code, whole = _run(store, thread, to, None)
    assert code == 0, f"seed {SEED}: the uncut rewind failed"
    killed_mid_run = 0
    for trial in range(TRIALS):
        base = tmp_path / f"trial{trial}"
        workspace, store, thread, to, old, new = _setup(base, rng)
        code, _ = _run(store, thread, to, rng.uniform(0, whole))
        where = f"seed {SEED}, trial {trial}"
        for path in old:
            digest = _sha((workspace / path).read_bytes())
            assert digest in (_sha(old[path]), _sha(new[path])), f"{where}: {path} is torn"
        interrupted = False
        if code is None:
            rollout = b"".join(p.read_bytes() for p in store.glob("sessions/**/*.jsonl"))
            interrupted = b'"stage":"end"' not in rollout
            if interrupted:
                killed_mid_run += 1
                report = _check_resume(store, thread, workspace)
                assert any(i["subsystem"] == "rewinds" and "did not finish" in i["reason"]
                           for i in report["invalidated"]), where
        again = _cli(store, "rewind", thread, "--to", str(to))
        out, err = again.communicate(timeout=120)
        assert again.returncode == 0, f"{where}: {err.decode()}"
        assert (orjson.loads(out)["finished_interrupted"] is not None) == interrupted, where
        assert all((workspace / p).read_bytes() == old[p] for p in old), where
        assert not list(workspace.rglob("*.sk-rewind")), f"{where}: a temp file was left"
        report = _check_resume(store, thread, workspace)
        assert not [d for d in report["differences"] if d["kind"].startswith("file_")], where
        assert not [i for i in report["invalidated"] if i["subsystem"] == "rewinds"], where
    print(f"seed {SEED}: {killed_mid_run} of {TRIALS} kills hit a running rewind ({whole:.2f} s)")
    assert killed_mid_run or TRIALS == 0, f"seed {SEED}: no kill hit a running rewind"


def test_a_rewind_killed_after_its_files_were_written_is_finished_and_can_be_undone(
        tmp_path: Path) -> None:
    """Fixture: a repo whose thread wrote a.py and b.py twice; a child process (kill9_after_rewrite.py)
    rewinds both to their first versions and SIGKILLs itself before the end record."""
    workspace = init_repo(tmp_path / "ws", {"README.md": "undo after a crash\n"})
    first, second = {"a.py": b"a1\n", "b.py": b"b1\n"}, {"a.py": b"a2\n", "b.py": b"b2\n"}
    with Keeper(tmp_path / "store").start(workspace) as session:
        for versions in (first, second):
            for path, data in versions.items():
                (workspace / path).write_bytes(data)
            acks = session.record_many([{"type": "file_change", "path": p} for p in versions])
            if versions is first:
                to = acks[-1].seq
        thread, session_id = session.thread_id, session.session_id
    child = subprocess.run([sys.executable, str(Path(__file__).with_name("kill9_after_rewrite.py")),
                            str(tmp_path / "store"), session_id, str(to)], capture_output=True,
                           timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    assert {p: (workspace / p).read_bytes() for p in first} == first
    undo = _cli(tmp_path / "store", "rewind", thread, "--undo")
    out, err = undo.communicate(timeout=60)
    assert undo.returncode == 0, err.decode()
    assert orjson.loads(out)["finished_interrupted"] is not None
    assert {p: (workspace / p).read_bytes() for p in second} == second
