"""kill -9 of tool hooks and of folds at random points (issue 26): no call a hook acknowledged is
lost, none is counted twice, and hooks of one session racing each other never tear a line. Real
hook processes (the console script), real SIGKILL, a real repository."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from sessionkeeper.api import Keeper
from sessionkeeper.store import spool
from tests.faults.conftest import FIGURES
from tests.unit._hooks import HOOK, SID, payload, run

AGENT = "claude"
SERVER = str(Path(__file__).resolve().parents[2] / "server")
FOLD = ("import sys\nfrom sessionkeeper.api import Keeper\n"
        "Keeper(sys.argv[1]).journal('claude', sys.argv[2]).close()\n")


def _start(repo: Path, store: Path) -> None:
    done = run(AGENT, "SessionStart", json.dumps(payload(AGENT, "SessionStart", repo,
                                                         source="startup")), store)
    assert done.returncode == 0 and done.stderr == "", done.stderr


def _hook(repo: Path, store: Path, event: str, call: str) -> subprocess.Popen[bytes]:
    """One real tool hook process (an Edit of a file this round rewrites), stdin written."""
    data = payload(AGENT, event, repo, tool_name="Edit", tool_use_id=call,
                   tool_input={"file_path": str(repo / "payment.py")}, tool_response={"ok": 1})
    proc = subprocess.Popen([*HOOK, "hook", "--store", str(store), AGENT, event],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(data).encode())
    proc.stdin.close()
    return proc


def _calibrated(repo: Path, store: Path) -> tuple[float, float]:
    """(seconds four hooks started at once take here, seconds one fold process takes): the kills'
    delays scale with this machine's speed and load."""
    started = time.monotonic()
    procs = [_hook(repo, store, event, f"toolu_warm_{n}") for n in range(2)
             for event in ("PreToolUse", "PostToolUse")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    hooks = time.monotonic() - started
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", FOLD, str(store), SID], check=True, timeout=120,
                   env={**os.environ, "PYTHONPATH": SERVER})
    return hooks, time.monotonic() - started


def _records(store: Path) -> list[dict[str, object]]:
    keeper = Keeper(store)
    keeper.journal(AGENT, SID).close()  # the final fold
    rollouts = keeper.journal_rollouts(AGENT, SID)
    return [r for rollout in rollouts for r in rollout.records if r["type"] == "operation"]


def test_hooks_and_folds_killed_at_random_lose_and_double_no_acknowledged_call(
        repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`, `store_dir`; 240 tool hooks (Pre and Post of 120 Edit calls, four at a
    time), each killed with SIGKILL after a random delay up to 1.5 times what four take here (so
    some finish first), and 30 folds in their own processes killed after a random delay up to
    1.5 times what one takes."""
    _start(repo, store_dir)
    rng = random.Random(26)
    hooks_s, fold_s = _calibrated(repo, store_dir)
    acknowledged: set[tuple[str, str]] = set()
    killed = folds_killed = 0
    env = {**os.environ, "PYTHONPATH": SERVER}
    for round_ in range(60):
        (repo / "payment.py").write_text(f"def charge(amount):\n    return amount * {round_}\n")
        batch = []
        for n in range(2):
            call = f"toolu_{round_}_{n}"
            for event in ("PreToolUse", "PostToolUse"):
                batch.append((call, event, _hook(repo, store_dir, event, call),
                              rng.uniform(0, 1.5 * hooks_s)))
        if round_ % 2 == 0:  # a fold racing the hooks, killed too
            fold = subprocess.Popen([sys.executable, "-c", FOLD, str(store_dir), SID], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            batch.append(("fold", "", fold, rng.uniform(0, 1.5 * fold_s)))
        started = time.monotonic()
        for call, event, proc, delay in sorted(batch, key=lambda b: b[3]):
            time.sleep(max(0.0, started + delay - time.monotonic()))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            code = proc.wait(timeout=60)
            if call == "fold":
                folds_killed += code == -signal.SIGKILL
            elif code == 0:
                acknowledged.add((call, "started" if event == "PreToolUse" else "committed"))
            else:
                assert code == -signal.SIGKILL, code
                killed += 1
    counts = Counter((str(r["operation_id"]), str(r["status"])) for r in _records(store_dir))
    lost = sorted(acknowledged - set(counts))
    doubled = sorted(key for key, n in counts.items() if n > 1)
    FIGURES.append(("kill -9 of tool hooks and folds (spool)", 240 + 30, len(acknowledged),
                    len(lost)))
    assert killed > 20 and len(acknowledged) > 20 and folds_killed > 3, \
        (killed, len(acknowledged), folds_killed)  # the kills did land at random points
    assert lost == [] and doubled == []
    report = Keeper(store_dir, read_only=True).journal_keeper(AGENT).check_resume(
        SID, workspace=str(repo))
    assert report.damaged == []  # torn lines of killed hooks are no damage of a call
    assert not spool.pending(str(store_dir / "journals" / AGENT), SID)


def test_hooks_of_one_session_racing_each_other_never_tear_a_line(
        repo: Path, store_dir: Path) -> None:
    """Fixture: `repo`, `store_dir`; 24 PreToolUse hooks of one session started at once (parallel
    tool calls), each with a large argument so its line spans several pages."""
    _start(repo, store_dir)
    big = "x" * 20000
    procs = []
    for n in range(24):
        data = payload(AGENT, "PreToolUse", repo, tool_name="Bash", tool_use_id=f"toolu_race_{n}",
                       tool_input={"command": f"echo {n} {big}"})
        proc = subprocess.Popen([*HOOK, "hook", "--store", str(store_dir), AGENT, "PreToolUse"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        procs.append((proc, json.dumps(data).encode()))
    for proc, data in procs:
        _out, err = proc.communicate(data, timeout=60)
        assert proc.returncode == 0 and err == b"", err
    lines = spool.read(spool.spool_path(str(store_dir / "journals" / AGENT), SID))
    assert lines.damaged == [] and lines.torn == [] and not lines.unfinished
    assert sorted(str(c["call"]) for _end, c in lines.calls) == sorted(
        f"toolu_race_{n}" for n in range(24))
    counts = Counter(str(r["operation_id"]) for r in _records(store_dir))
    assert counts == {f"toolu_race_{n}": 1 for n in range(24)}
