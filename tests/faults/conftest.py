"""Real faults for the fault suite: a small tmpfs (ENOSPC), libfiu (EIO), a recording child.

A fault tool that cannot be had FAILS the test under CI (`CI` set): the suite is never skipped
there. On a developer machine it skips, saying why and how to get the tool
(`tests/faults/install-fault-tools.sh`, which `make test` runs).
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CHILD = Path(__file__).resolve().parent / "fault_child.py"
SERVER = Path(__file__).resolve().parents[2] / "server"
INSTALL = "tests/faults/install-fault-tools.sh"


def unavailable(why: str) -> None:
    """Fail under CI, skip elsewhere: a fault that cannot be injected is never a pass."""
    if os.environ.get("CI"):
        pytest.fail(f"fault tool unavailable in CI: {why}")
    pytest.skip(f"{why} (developer machine; CI fails instead; see {INSTALL})")


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A real 2 MiB tmpfs mounted under tmp_path (needs root or CAP_SYS_ADMIN), unmounted after."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    if shutil.which("mount") is None:
        unavailable("no `mount` command")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        unavailable(f"mount -t tmpfs not permitted: {done.stderr.strip() or done.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.fixture(scope="session")
def fiu_run() -> str:
    """The path of libfiu's `fiu-run` (Debian fiu-utils), with `fiu-ctrl` beside it."""
    path, ctrl = shutil.which("fiu-run"), shutil.which("fiu-ctrl")
    if not path or not ctrl or not Path("/usr/lib/fiu/fiu_posix_preload.so").exists():
        unavailable("libfiu (fiu-run, fiu-ctrl, fiu_posix_preload.so) is not installed")
    assert path is not None
    return path


class Child:
    """A fault_child.py process and its line protocol (see that module)."""

    def __init__(self, store: Path, workspace: Path, *, fiu_run: str | None = None,
                 prefix: tuple[str, ...] = ()) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (str(SERVER), os.environ.get("PYTHONPATH")) if p)}
        argv = [*prefix, sys.executable, str(CHILD), str(store), str(workspace)]
        if fiu_run:  # libfiu's POSIX preload, remote control on named pipes under /tmp
            argv = [fiu_run, "-x", *argv]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.buf = b""
        hello = self.read(timeout=60)
        assert hello.startswith("H ") and (prefix or hello == f"H {self.proc.pid}"), \
            f"child did not start: {hello!r} {self.stderr()}"  # a prefix runs it as its own child

    def ask(self, command: str, timeout: float = 60) -> str:
        """Send one command and return its reply line."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()
        return self.read(timeout, after=command)

    def read(self, timeout: float, after: str = "start-up") -> str:
        """The next line the child writes."""
        assert self.proc.stdout is not None
        command = after
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise AssertionError(f"child silent after {command!r}: {self.stderr()}")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"child died after {command!r}: {self.stderr()}")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def fiu(self, command: str) -> None:
        """Run a libfiu remote-control command in the child (`enable name=…,failinfo=5`)."""
        pipe = Path(os.environ.get("TMPDIR", "/tmp")) / f"fiu-ctrl-{self.proc.pid}.in"
        assert pipe.exists(), f"no libfiu control pipe {pipe}: not started under fiu-run -x?"
        done = subprocess.run(["fiu-ctrl", "-c", command, str(self.proc.pid)],
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"fiu-ctrl {command!r}: {done.stderr}"

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")[-3000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


class Ledger:
    """What a fault test acknowledged and refused, checked against the rollout re-read from disk.

    The figures of every test land in FIGURES, printed once at the end of the session.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.acked: dict[int, str] = {}  # seq -> tag of the message acknowledged with it
        self.refused: list[str] = []  # tags of records whose write failed (must not be on disk)

    def take(self, reply: str, tag: str) -> bool:
        """Record a child's reply to `record … tag …`; True when it was acknowledged."""
        if reply.startswith("A "):
            seq = int(reply.split()[1])
            assert seq not in self.acked, f"seq {seq} acknowledged twice"
            self.acked[seq] = tag
            return True
        return False

    def check(self, path: Path, *, cut_off: bool = True) -> None:
        """Re-read the rollout: clean, seq contiguous, every ack present, no cut-off record."""
        from sessionkeeper.store.reader import Status, read_rollout

        rollout = read_rollout(path)
        assert rollout.status is Status.OK, (rollout.status, rollout.damage)
        assert rollout.damage == [] and rollout.tail is None, (rollout.damage, rollout.tail)
        seqs = [r["seq"] for r in rollout.records]
        assert rollout.meta is not None
        first = rollout.meta["seq"] + 1
        assert seqs == list(range(first, first + len(seqs))), "seq not contiguous"
        tags = {r["seq"]: str(r.get("text", "")).split(" ", 1)[0] for r in rollout.records}
        lost = sorted(seq for seq, tag in self.acked.items() if tags.get(seq) != tag)
        FIGURES.append((self.name, 1, len(self.acked), len(lost)))
        assert not lost, f"acknowledged and lost: {lost}"
        if cut_off:
            kept = set(tags.values()) & set(self.refused)
            assert not kept, f"records reported as failed are on disk: {sorted(kept)}"


FIGURES: list[tuple[str, int, int, int]] = []  # (what, trials, acknowledged checked, lost)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the fault suite's figures: acknowledged events checked and lost, per test."""
    if not FIGURES:
        return
    terminalreporter.write_line("")
    terminalreporter.write_line(f"fault suite: {sum(f[1] for f in FIGURES)} trials, "
                                f"{sum(f[2] for f in FIGURES)} acknowledged events checked, "
                                f"{sum(f[3] for f in FIGURES)} lost")
    for name, trials, checked, lost in FIGURES:
        terminalreporter.write_line(f"  {name}: {trials} trial(s), {checked} acknowledged, "
                                    f"{lost} lost")
