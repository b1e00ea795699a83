"""Signals and priority of a relayed command (`cli.relay`, `cli.resident`), as real processes: a
relayed command ends of the signal it was sent as it does in-process, a signal the asking process
ignores is not passed on, the child runs at the asking process's nice value, and a child killed
outright is said so. Each case runs relayed and in-process side by side, with a git that hangs."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ._resident import Resident


def _fake_git(tmp_path: Path) -> Path:
    """A folder whose `git` waits a minute (the relayed child's git look-up then hangs)."""
    bin_dir = tmp_path / "slow-bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "git").write_text("#!/bin/sh\nexec sleep 60\n")
    (bin_dir / "git").chmod(0o755)
    return bin_dir


def _running_child(resident: Resident, client: subprocess.Popen[str]) -> int:
    """The pid of the resident's child answering `client` (once it is relayed)."""
    resident.wait_for("relayed")
    deadline = time.monotonic() + 30
    while True:
        kids = subprocess.run(["pgrep", "-P", str(resident.proc.pid)], capture_output=True,
                              text=True).stdout.split()
        if kids:
            return int(kids[0])
        assert client.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)


def _gits_of(pid: int, client: subprocess.Popen[str]) -> list[int]:
    """The pids of the (hanging) gits that process `pid` started, once one runs."""
    deadline = time.monotonic() + 30
    while True:
        kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
        if kids:
            return [int(kid) for kid in kids]
        assert client.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)


def _signalled(resident: Resident, repo: Path, tmp_path: Path, *signums: int, relayed: bool,
               ignore: int | None = None) -> tuple[int, str]:
    """A listing whose git hangs, relayed or in-process, sent `signums` (0.5 s apart) once its
    git runs (`ignore`: a signal it was started ignoring); its exit status and stderr."""
    env = resident.env(relayed, PATH=f"{_fake_git(tmp_path)}:{os.environ['PATH']}")
    client = subprocess.Popen(
        [sys.executable, "-m", "sessionkeeper", "list", "--workspace", str(repo)], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=None if ignore is None else lambda: signal.signal(ignore, signal.SIG_IGN))
    gits = _gits_of(_running_child(resident, client) if relayed else client.pid, client)
    try:
        for n, signum in enumerate(signums):
            if n:
                time.sleep(0.5)  # a signal wrongly passed on would have ended the child by now
            client.send_signal(signum)
        _, err = client.communicate(timeout=30)
    finally:
        for pid in gits:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return client.returncode, err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                         ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_ends_a_relayed_command_as_it_ends_one_in_process(
        resident: Resident, repo: Path, tmp_path: Path, signum: int) -> None:
    """Fixture: a listing whose git hangs, sent SIGINT (Ctrl-C), SIGTERM or SIGHUP: relayed, it
    ends of that signal as it does in-process (never exit 130 or 70 instead), SIGINT with the
    interpreter's KeyboardInterrupt traceback; a shell script or CI runner sees one end."""
    there, there_err = _signalled(resident, repo, tmp_path, signum, relayed=True)
    here, here_err = _signalled(resident, repo, tmp_path, signum, relayed=False)
    assert there == here == -signum, (there_err, here_err)
    assert ("KeyboardInterrupt" in there_err) == ("KeyboardInterrupt" in here_err) \
        == (signum == signal.SIGINT)
    assert "ended without an exit status" not in there_err


def test_a_signal_ignored_by_the_asking_process_is_not_passed_on(
        resident: Resident, repo: Path, tmp_path: Path) -> None:
    """Fixture: a listing started with SIGTERM ignored (as under a `trap '' TERM`), sent SIGTERM,
    then SIGINT: relayed as in-process, SIGTERM does nothing and SIGINT ends it."""
    there, _ = _signalled(resident, repo, tmp_path, signal.SIGTERM, signal.SIGINT, relayed=True,
                          ignore=signal.SIGTERM)
    here, _ = _signalled(resident, repo, tmp_path, signal.SIGTERM, signal.SIGINT, relayed=False,
                         ignore=signal.SIGTERM)
    assert there == here == -signal.SIGINT


def test_a_relayed_command_runs_at_the_asking_processs_nice_value(
        resident: Resident, repo: Path, tmp_path: Path) -> None:
    """Fixture: a listing started under `nice -n 7`, whose git notes its nice value: relayed, its
    git runs at 7 as it does in-process (the resident itself runs at 0)."""
    bin_dir = tmp_path / "noting-bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f'#!/bin/sh\nnice >> "$NICE_LOG"\nexec {shutil.which("git")} "$@"\n')
    (bin_dir / "git").chmod(0o755)
    seen = {}
    for relayed in (True, False):
        log = tmp_path / f"nice-{relayed}.log"
        env = resident.env(relayed, PATH=f"{bin_dir}:{os.environ['PATH']}", NICE_LOG=str(log))
        done = subprocess.run([sys.executable, "-m", "sessionkeeper", "list", "--workspace",
                               str(repo)], env=env, capture_output=True, text=True, timeout=60,
                              preexec_fn=lambda: os.nice(7))
        assert done.returncode == 0, done.stderr
        seen[relayed] = set(log.read_text().split())
    assert resident.relayed() == 1
    assert seen[True] == seen[False] == {"7"}
    assert os.getpriority(os.PRIO_PROCESS, resident.proc.pid) == 0


def test_a_child_killed_mid_answer_is_said_so(resident: Resident, repo: Path,
                                              tmp_path: Path) -> None:
    """Fixture: a relayed listing whose git hangs; its child is killed with SIGKILL: the asking
    process says so and exits 70 (it does not run the command a second time)."""
    env = resident.env(True, PATH=f"{_fake_git(tmp_path)}:{os.environ['PATH']}")
    client = subprocess.Popen([sys.executable, "-m", "sessionkeeper", "list", "--workspace",
                               str(repo)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    os.kill(_running_child(resident, client), signal.SIGKILL)
    out, err = client.communicate(timeout=30)
    assert client.returncode == 70 and out == ""
    assert "ended without an exit status" in err
