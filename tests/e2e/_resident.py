"""The resident reader as a real process beside the CLI, and the fixtures its tests share: a thread
started through the CLI in `repo`, and a resident serving its store."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest


class Resident:
    """A resident process serving `store`, its log, and a way to run the CLI beside it."""

    def __init__(self, store: Path, log: Path, *, pythonpath: Path | None = None,
                 socket: str | None = None, default: bool = False) -> None:
        """`default`: `store` is the per-user default store ($XDG_DATA_HOME/sessionkeeper)."""
        self.store, self.log, self.pythonpath, self.default = store, log, pythonpath, default
        self.socket = socket or str(store / "run" / "cli.sock")  # where the CLI looks (relayed())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sessionkeeper.cli.resident", self.socket],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log.open("wb"),
            env=self.env(True, SESSIONKEEPER_LOG="INFO"))  # each relayed command logged
        self.wait_for("listening on")

    def env(self, relayed: bool, **extra: str) -> dict[str, str]:
        """The environment of a CLI process (relaying on or off) of this store."""
        env = {**os.environ, "SESSIONKEEPER_HOME": str(self.store), "NO_COLOR": "1",
               "SESSIONKEEPER_RESIDENT": "1" if relayed else "0", **extra}
        if self.default:
            del env["SESSIONKEEPER_HOME"]
            env["XDG_DATA_HOME"] = str(self.store.parent)
        if self.pythonpath is not None:
            env["PYTHONPATH"] = str(self.pythonpath)
        return env

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines()

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines()):
            assert self.proc.poll() is None, f"ended without {text!r}: {self.lines()}"
            assert time.monotonic() < deadline, f"no {text!r} in {self.lines()}"
            time.sleep(0.02)

    def run(self, *args: str, relayed: bool = True, cwd: Path | None = None,
            limit: tuple[int, int] | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
        """The CLI, relayed or in-process (`limit`: its RLIMIT_FSIZE, as `ulimit -f` sets)."""
        def limited() -> None:
            if limit is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, limit)

        return subprocess.run([sys.executable, "-m", "sessionkeeper", *args], cwd=cwd,
                              capture_output=True, text=True, timeout=60, preexec_fn=limited,
                              env=self.env(relayed, **extra))

    def relayed(self) -> int:
        return sum(line.startswith("sessionkeeper resident: relayed") for line in self.lines())

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=10)


@pytest.fixture
def thread(store_dir: Path, repo: Path) -> str:
    """A thread started in `repo` through the CLI (in-process), with one message."""
    env = {**os.environ, "SESSIONKEEPER_HOME": str(store_dir), "SESSIONKEEPER_RESIDENT": "0"}
    out = subprocess.run([sys.executable, "-m", "sessionkeeper", "start", "--workspace", str(repo),
                          "--title", "resident story", "--json"], capture_output=True, text=True,
                         env=env, timeout=60, check=True)
    ids = orjson.loads(out.stdout)
    subprocess.run([sys.executable, "-m", "sessionkeeper", "record", "--session", ids["session_id"]],
                   input='{"type": "message", "role": "user", "text": "go on"}\n', env=env,
                   capture_output=True, text=True, timeout=60, check=True)
    return str(ids["thread_id"])


@pytest.fixture
def resident(store_dir: Path, tmp_path: Path, thread: str) -> Iterator[Resident]:
    """A resident of the thread's store."""
    kept = Resident(store_dir, tmp_path / "resident.log")
    yield kept
    kept.stop()
