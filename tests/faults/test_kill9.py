"""A real `kill -9`: a child process records events and is SIGKILLed at a random moment.

Invariants checked in every trial (reliability.md §4.2 K1, §4.4 C2):
- every event whose record() returned (acknowledged on the child's stdout) is in the rollout;
- seq is contiguous, nothing is duplicated, the middle is never damaged;
- only the tail may be torn; resuming quarantines exactly the torn bytes and the rollout then
  reads clean; the rebuilt index lists the thread;
- the writer lock dies with its holder: a new Keeper resumes the thread within 1 s.

Three writers take turns: the full API path in `written` mode, the store's bare writer (large
lines: the most torn tails), and 4 threads recording `durable` events at once (group commit).
Randomness is in timing only (kill delay, event sizes); the assertions hold in every trial.
`SK_KILL9_TRIALS` (default 60) and `SK_KILL9_SEED` override the defaults; the seed is printed
with every failure and in the summary line (trials, acknowledged events checked, lost, torn
tails, per writer).
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import ThreadBusy
from sessionkeeper.store.index import ListQuery
from sessionkeeper.store.reader import Status, read_rollout
from sessionkeeper.store.store import Store

from ..conftest import git
from .conftest import FIGURES

WRITER = Path(__file__).resolve().parent / "kill9_writer.py"
SERVER = Path(__file__).resolve().parents[2] / "server"
TRIALS = int(os.environ.get("SK_KILL9_TRIALS", "60"))
SEED = int(os.environ.get("SK_KILL9_SEED", random.SystemRandom().randrange(2**32)))


class Child:
    """A writer process and an unbuffered line reader on its stdout."""

    def __init__(self, store: Path, workspace: Path, seed: int, log: Path, mode: str) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SERVER), env.get("PYTHONPATH")) if p)
        self.stderr = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, str(WRITER), str(store), str(workspace), str(seed), mode],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.fd = self.proc.stdout.fileno()
        self.buf = b""
        self.log = log

    def readline(self, timeout: float) -> str:
        """The next line, or '' at EOF; fails the test after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise AssertionError(f"writer silent for {timeout} s; stderr:\n{self.errors()}")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return ""
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def rest(self) -> list[str]:
        """Every remaining line up to EOF (after the kill)."""
        while chunk := os.read(self.fd, 65536):
            self.buf += chunk
        lines = self.buf.split(b"\n")
        self.buf = b""
        return [ln.decode() for ln in lines if ln]

    def go(self) -> None:
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.flush()

    def kill(self) -> int:
        self.proc.send_signal(signal.SIGKILL)
        return self.proc.wait()

    def errors(self) -> str:
        self.stderr.flush()
        return self.log.read_text(errors="replace")[-3000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.stderr):
            stream.close()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A real git repository the sessions run in (one commit, clean)."""
    root = tmp_path_factory.mktemp("kill9") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("print('hello')\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "initial")
    return root


LOOKAHEAD = 2  # children started ahead of their trial
MODES = ("api", "writer", "durable")  # kill9_writer.py: API path / bare writer / durable threads


def _start(tmp: Path, n: int, workspace: Path, seed: int) -> tuple[Child, Path]:
    trial = tmp / f"trial-{n:03d}"
    trial.mkdir()
    child = Child(trial / "store", workspace, seed, trial / "stderr.log", MODES[n % len(MODES)])
    return child, trial / "store"


def _ready(child: Child) -> tuple[str, Path, int]:
    line = child.readline(timeout=60)
    assert line.startswith("R "), f"writer did not start: {line!r}; stderr:\n{child.errors()}"
    _, thread, _session, path, last = line.split(" ")
    return thread, Path(path), int(last)


def _acks(lines: list[str]) -> list[int]:
    return [int(ln[2:]) for ln in lines if ln.startswith("A ")]


def _check_trial(store: Path, workspace: Path, thread: Path, path: Path, acked: list[int],
                 why: str) -> bool:
    """Verify one killed session; return whether its tail was torn."""
    data = path.read_bytes()
    rollout = read_rollout(path)
    assert rollout.status is Status.OK, f"{why}: status {rollout.status}"
    assert rollout.damage == [], f"{why}: middle damage {rollout.damage}"
    assert rollout.duplicates == [], f"{why}: duplicates at lines {rollout.duplicates}"
    seqs = [r["seq"] for r in rollout.records]
    first = rollout.meta["seq"] + 1
    assert seqs == list(range(first, first + len(seqs))), f"{why}: seq not contiguous"
    missing = sorted(set(acked) - set(seqs))
    assert not missing, f"{why}: acknowledged seqs lost: {missing[:10]} (last kept {seqs[-1:]})"
    tail = rollout.tail
    if tail is not None:
        assert tail.offset + tail.length == len(data), f"{why}: tail is not the end of the file"
        assert data[tail.offset - 1:tail.offset] == b"\n", f"{why}: tail does not start a line"
        torn = data[tail.offset:]
        assert torn.startswith(b'{"seq":%d,' % (rollout.last_seq + 1)), (
            f"{why}: torn bytes are not the next record: {torn[:40]!r}")
    # resume after every kill: the lock is free, a torn tail is quarantined, the thread continues
    report, session = Keeper(store).resume(str(thread), workspace=str(workspace),
                                           decision="continue")
    assert session is not None, f"{why}: resume did not continue (verdict {report.verdict})"
    session.close()
    if tail is not None:
        assert len(report.quarantined) == 1, f"{why}: quarantined {report.quarantined}"
        quarantined = report.quarantined[0]
        assert (quarantined["offset"], quarantined["bytes"]) == (tail.offset, len(torn)), why
        assert Path(quarantined["path"]).read_bytes() == torn, f"{why}: quarantine != torn bytes"
    else:
        assert report.quarantined == [], f"{why}: quarantined {report.quarantined}"
    after = read_rollout(path)
    assert after.tail is None and after.damage == [] and after.status is Status.OK, why
    assert [r["seq"] for r in after.records] == seqs, f"{why}: records changed by the repair"
    assert path.stat().st_size == (tail.offset if tail else len(data)), why
    index = Store(store)
    index.rebuild()
    listed = {row.thread_id for row in index.list_threads(ListQuery(include_archived=True))}
    assert str(thread) in listed, f"{why}: thread missing from the rebuilt index"
    return tail is not None


@pytest.mark.slow
def test_sigkill_loses_no_acknowledged_event_and_damages_only_the_tail(tmp_path, workspace):
    """K1: TRIALS real SIGKILLs at random moments; half through the API, half the bare writer."""
    rng = random.Random(SEED)
    started = time.monotonic()
    torn = dict.fromkeys(MODES, 0)
    acked = dict.fromkeys(MODES, 0)
    trials = dict.fromkeys(MODES, 0)
    seeds = [rng.randrange(2**32) for _ in range(TRIALS)]
    # children start (imports, git baseline) ahead of their trial, overlapping the checks
    pending = [_start(tmp_path, n, workspace, seeds[n]) for n in range(min(LOOKAHEAD, TRIALS))]
    try:
        for n in range(TRIALS):
            child, store = pending.pop(0)
            thread, path, _ = _ready(child)
            child.go()
            first = child.readline(timeout=30)
            assert first.startswith("A "), f"no first ack: {first!r}; stderr:\n{child.errors()}"
            delay = rng.uniform(0.005, 0.060)
            time.sleep(delay)
            code = child.kill()
            if n + LOOKAHEAD < TRIALS:
                pending.append(_start(tmp_path, n + LOOKAHEAD, workspace, seeds[n + LOOKAHEAD]))
            mode = MODES[n % len(MODES)]
            seqs = _acks([first, *child.rest()])
            why = (f"trial {n} ({mode}; SK_KILL9_SEED={SEED}, child seed {seeds[n]}, "
                   f"kill after {delay * 1e3:.1f} ms, {len(seqs)} acks)")
            assert code == -signal.SIGKILL, f"{why}: writer exited {code}:\n{child.errors()}"
            child.close()
            torn[mode] += _check_trial(store, workspace, thread, path, seqs, why)
            acked[mode] += len(seqs)
            trials[mode] += 1
    finally:
        for child, _store in pending:
            child.close()
    elapsed = time.monotonic() - started
    for mode in MODES:  # every acknowledged seq was found above (a loss fails the trial)
        FIGURES.append((f"kill -9 ({mode}; {torn[mode]} torn tails, quarantined)", trials[mode],
                        acked[mode], 0))
    per_mode = "; ".join(f"{m}: {trials[m]} trials, {acked[m]} acked, {torn[m]} torn"
                         for m in MODES)
    print(f"\nkill -9: {TRIALS} trials, {sum(acked.values())} acknowledged events checked, "
          f"0 lost, {sum(torn.values())} torn tails, all quarantined ({per_mode}); "
          f"{elapsed:.1f} s; SK_KILL9_SEED={SEED}")


def test_writer_lock_dies_with_its_holder(tmp_path, workspace):
    """C2: while the writer lives a resume is refused; after SIGKILL one succeeds within 1 s."""
    child, store = _start(tmp_path, 0, workspace, SEED)
    try:
        thread, _path, _ = _ready(child)
        child.go()
        assert child.readline(timeout=30).startswith("A "), child.errors()
        with pytest.raises(ThreadBusy):
            Keeper(store).resume(thread, workspace=str(workspace), decision="continue")
        assert child.proc.poll() is None, "the writer must still be alive for this check"
        assert child.kill() == -signal.SIGKILL
        killed = time.monotonic()
        session = None
        while session is None and time.monotonic() - killed < 1.0:
            try:
                _report, session = Keeper(store).resume(thread, workspace=str(workspace),
                                                        decision="continue")
            except ThreadBusy:
                time.sleep(0.01)
        took = time.monotonic() - killed
        assert session is not None, f"no resume within 1 s of the kill (SK_KILL9_SEED={SEED})"
        assert took < 1.0, f"resume took {took:.3f} s"
        session.record({"type": "message", "role": "user", "text": "after the kill"})
        session.close()
        print(f"\nlock released by SIGKILL: resumed {took * 1e3:.0f} ms after the kill")
    finally:
        child.close()


FORKER = """
import sys, time
from sessionkeeper.api import Keeper
from sessionkeeper.recovery.lifecycle import Hook, HookRegistry

def hang(context):
    print("in fork hook", flush=True)
    time.sleep(60)

hooks = HookRegistry()
hooks.add(Hook(name="slow", sources={"fork"}, order=0, fn=hang, timeout_s=30))
Keeper(sys.argv[1], hooks=hooks).fork(sys.argv[2])
"""


def test_a_fork_killed_in_its_lifecycle_hook_keeps_the_state_it_forked(tmp_path, workspace):
    """Fixture: a thread with a todo and two messages; a child forks it with a fork hook that
    hangs and is SIGKILLed there (the fork's meta and lifecycle are on disk, nothing after)."""
    store = tmp_path / "store"
    keeper = Keeper(store)
    with keeper.start(workspace, title="parent") as session:
        session.record({"type": "todo", "items": [{"id": "1", "text": "fix rounding"}]})
        session.record({"type": "message", "role": "user", "text": "round half up"})
        session.record({"type": "message", "role": "assistant", "text": "done"})
        parent = session.thread_id
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(p for p in (str(SERVER), os.environ.get("PYTHONPATH")) if p)}
    child = subprocess.Popen([sys.executable, "-c", FORKER, str(store), parent],
                             stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout is not None and child.stdout.readline() == "in fork hook\n"
    finally:
        child.kill()
        child.wait(timeout=30)
    (fork,) = [t.thread_id for t in Store(store).list_threads(ListQuery()) if t.thread_id != parent]
    report = Keeper(store).check_resume(fork, workspace=str(workspace))
    summaries = {name: sub.summary for name, sub in report.subsystems.items()}
    assert (summaries["todos"]["total"], summaries["context"]["messages"]) == (1, 2), summaries
