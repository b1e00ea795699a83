"""A real `kill -9` of a process writing through a framework adapter loses nothing acknowledged.

- LangGraph saver: every checkpoint whose put() returned, and every write whose put_writes()
  returned, is read back by a new saver on the store (values and writes intact);
- Claude SDK store: every entry whose append() returned is loaded, in order, exactly once;
- a two-node StateGraph killed while node 2 runs resumes from the checkpoint after node 1:
  node 1 is not run again, node 2 is, and the run finishes.

Randomness is in timing only (kill delay, value sizes); `SK_KILL9_SEED` fixes the seed.
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
from claude_agent_sdk.types import SessionKey  # noqa: E402
from langchain_core.runnables import RunnableConfig  # noqa: E402

from sessionkeeper.integrations.claude_sdk import SessionKeeperSessionStore  # noqa: E402
from sessionkeeper.integrations.langgraph import SessionKeeperSaver  # noqa: E402

WRITER = Path(__file__).resolve().parent / "framework_writer.py"
SERVER = Path(__file__).resolve().parents[2] / "server"
SEED = int(os.environ.get("SK_KILL9_SEED", random.SystemRandom().randrange(2**32)))
TRIALS = 8
THREAD: RunnableConfig = {"configurable": {"thread_id": "kill9-thread", "checkpoint_ns": ""}}


class Child:
    """A writer process and an unbuffered line reader on its stdout."""

    def __init__(self, *args: str, log: Path) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SERVER), env.get("PYTHONPATH")) if p)
        self.log = log
        self.stderr = log.open("wb")
        self.proc = subprocess.Popen([sys.executable, str(WRITER), *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.fd = self.stdout.fileno()
        self.buf = b""

    def readline(self, timeout: float) -> str:
        """The next line, or '' at EOF; fails the test after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise AssertionError(f"child silent for {timeout} s; stderr:\n{self.errors()}")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return ""
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def kill_after(self, seconds: float) -> list[str]:
        """Let it run until its first acknowledgement and `seconds` more, SIGKILL it, and return
        every line it printed."""
        self.stdin.write(b"go\n")
        self.stdin.flush()
        first = self.readline(timeout=60)
        time.sleep(seconds)
        self.proc.send_signal(signal.SIGKILL)
        assert self.proc.wait() == -signal.SIGKILL
        while chunk := os.read(self.fd, 65536):
            self.buf += chunk
        return [first] + [ln.decode() for ln in self.buf.split(b"\n") if ln]

    def errors(self) -> str:
        self.stderr.flush()
        return self.log.read_text(errors="replace")[-3000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stdin.close()
        self.stdout.close()
        self.stderr.close()


def _killed(tmp: Path, mode: str, trial: int) -> tuple[Path, list[str]]:
    store = tmp / f"{mode}-{trial}" / "store"
    child = Child(str(store), mode, str(SEED + trial), log=tmp / f"{mode}-{trial}.log")
    try:
        assert child.readline(timeout=60) == "R", child.errors()
        rng = random.Random(SEED + trial)
        return store, child.kill_after(rng.uniform(0.0, 0.3))
    finally:
        child.close()


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(TRIALS))
def test_a_killed_saver_loses_no_acknowledged_checkpoint_or_write(tmp_path: Path,
                                                                  trial: int) -> None:
    """Fixture: a child putting checkpoints and writes in `written` mode, SIGKILLed at random."""
    store, lines = _killed(tmp_path, "saver", trial)
    put = [ln.split()[1:] for ln in lines if ln.startswith("C ")]
    written = {ln.split()[1] for ln in lines if ln.startswith("W ")}
    assert put, f"seed {SEED}: nothing acknowledged before the kill"
    with SessionKeeperSaver(store) as saver:
        listed = {t.checkpoint["id"]: t for t in saver.list(THREAD)}
        for checkpoint_id, n in put:
            found = listed.get(checkpoint_id)
            assert found is not None, f"seed {SEED}: acknowledged checkpoint {n} lost"
            assert found.checkpoint["channel_values"]["n"] == int(n)
            if checkpoint_id in written:
                assert [w[1:] for w in found.pending_writes or []] == [("out", f"w{n}")]
        latest = saver.get_tuple(THREAD)
        assert latest is not None and latest.checkpoint["id"] >= put[-1][0]
        checkpoint_id, n = random.Random(SEED).choice(put)
        config: RunnableConfig = {"configurable": {**THREAD["configurable"],
                                                   "checkpoint_id": checkpoint_id}}
        found = saver.get_tuple(config)
        assert found is not None and found.checkpoint["channel_values"]["n"] == int(n)


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(TRIALS))
def test_a_killed_sdk_store_loses_no_acknowledged_entry(tmp_path: Path, trial: int) -> None:
    """Fixture: a child appending transcript batches, SIGKILLed at random."""
    store, lines = _killed(tmp_path, "sdk", trial)
    acked = [ln.split()[1] for ln in lines if ln.startswith("A ")]
    assert acked, f"seed {SEED}: nothing acknowledged before the kill"
    sdk = SessionKeeperSessionStore(store)
    try:
        loaded = sdk.load_sync(SessionKey(project_key="kill9-project", session_id="kill9-session"))
    finally:
        sdk.close()
    uuids = [e.get("uuid") for e in loaded or []]
    assert len(uuids) == len(set(uuids)), f"seed {SEED}: an entry loaded twice"
    assert uuids[:len(acked)] == acked, f"seed {SEED}: acknowledged entries lost or reordered"


def test_a_graph_killed_in_node_2_resumes_from_the_checkpoint_after_node_1(tmp_path: Path) -> None:
    """Fixture: a two-node StateGraph on the saver in a child, SIGKILLed while node 2 runs."""
    store, effects = tmp_path / "store", tmp_path / "side-effects.txt"
    child = Child(str(store), "graph", str(effects), log=tmp_path / "graph.log")
    try:
        assert child.readline(timeout=60) == "N2", child.errors()
        child.proc.send_signal(signal.SIGKILL)
        assert child.proc.wait() == -signal.SIGKILL
    finally:
        child.close()
    assert effects.read_text().splitlines() == ["node1", "node2"]
    with SessionKeeperSaver(store) as saver:
        latest = saver.get_tuple(THREAD)
        assert latest is not None and latest.checkpoint["channel_values"]["steps"] == ["node1"]
    resumed = Child(str(store), "graph-resume", str(effects), log=tmp_path / "resume.log")
    try:
        assert resumed.readline(timeout=60) == "DONE node1,node2", resumed.errors()
        assert resumed.proc.wait(timeout=30) == 0
    finally:
        resumed.close()
    assert effects.read_text().splitlines() == ["node1", "node2", "node2"]
