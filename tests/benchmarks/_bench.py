"""What the issue-13 benchmarks share: child processes timed with their peak RSS, alternation,
medians and ranges, and the table every case prints (subject, baseline, ratio, target).

Every figure is measured side by side in one run: subject and baseline alternate inside each
repetition (the order flips each time), so machine noise falls on both alike.
"""

from __future__ import annotations

import contextlib
import gc
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SERVER_DIR = Path(__file__).resolve().parents[2] / "server"


@dataclass(frozen=True)
class Run:
    """One child process: wall seconds, peak resident set (bytes), exit code, its stdout."""

    seconds: float
    peak_rss: int
    code: int
    out: bytes


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a benchmarked child: this checkout's server first on the path, and
    bytecode cached as an installed package has it (PYTHONDONTWRITEBYTECODE would make every
    child compile every module again)."""
    path = os.pathsep.join(filter(None, [str(SERVER_DIR), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "GIT_CONFIG_NOSYSTEM": "1", **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_server() -> None:
    """Write the server's bytecode once, before anything is timed."""
    import compileall

    compileall.compile_dir(str(SERVER_DIR), quiet=1)


# Peak RSS must be the child's own: a child forked from this (large) process inherits its
# high-water mark across exec, so a small launcher (exec'd, then spawning) measures it instead.
_LAUNCH = """
import os, sys, time
null = os.open(os.devnull, os.O_WRONLY)
t0 = time.perf_counter()
fd, argv = int(sys.argv[1]), sys.argv[2:]
pid = os.posix_spawnp(argv[0], argv, os.environ,
                      file_actions=[(os.POSIX_SPAWN_DUP2, null, 2), (os.POSIX_SPAWN_CLOSE, fd)])
_, status, usage = os.wait4(pid, 0)
dt = time.perf_counter() - t0
os.write(fd, b"%r %d %d" % (dt, usage.ru_maxrss, os.waitstatus_to_exitcode(status)))
"""


def run_child(argv: Sequence[str], *, env: dict[str, str] | None = None,
              cwd: str | None = None) -> Run:
    """Run a command to its end: wall time from spawn to exit, its own peak RSS (wait4)."""
    read, write = os.pipe()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, "-S", "-c", _LAUNCH, str(write), *argv], stdout=out,
                                stderr=subprocess.DEVNULL, env=env, cwd=cwd,
                                pass_fds=(write,))
        os.close(write)
        with os.fdopen(read, "rb") as report:
            figures = report.read()
        proc.wait()
        out.seek(0)
        if not figures:
            raise RuntimeError(f"launcher failed for {argv!r} (exit {proc.returncode})")
        seconds, rss, code = figures.split()
        return Run(float(seconds), int(rss) * 1024, int(code), out.read())


def sessionkeeper() -> list[str]:
    """The console script beside this interpreter (what a user runs), else `python -m`."""
    script = Path(sys.executable).with_name("sessionkeeper")
    return [str(script)] if script.exists() else [sys.executable, "-m", "sessionkeeper"]


def alternate(reps: int, cases: dict[str, Callable[[], Any]], *,
              collect: bool = False) -> dict[str, list[Any]]:
    """Run each case once per repetition, flipping the order every repetition (`collect`: a full
    garbage collection before each run, so none lands inside another case's timing)."""
    names = list(cases)
    out: dict[str, list[Any]] = {n: [] for n in names}
    for r in range(reps):
        for name in (names if r % 2 == 0 else names[::-1]):
            if collect:
                gc.collect()
            out[name].append(cases[name]())
    return out


def median(xs: Sequence[float]) -> float:
    """The median."""
    return float(statistics.median(xs))


def ms(x: float) -> str:
    """Seconds as a short human figure."""
    if x < 1e-3:
        return f"{x * 1e6:.0f} us"
    return f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.2f} s"


def spread(xs: Sequence[float]) -> str:
    """`median [min..max]` of seconds."""
    return f"{ms(median(xs))} [{ms(min(xs))}..{ms(max(xs))}]"


Row = tuple[str, str, str, str, str, str]


def row(case: str, subject: str, baseline: str, ratio: float, *, target: str,
        met: bool | None, unit: str = "x") -> Row:
    """One table row; `met` None: reported, no target."""
    verdict = "-" if met is None else ("PASS" if met else "MISS")
    return case, subject, baseline, f"{ratio:.2f}{unit}", target, verdict


def print_table(rows: Sequence[Row]) -> None:
    """The rows as an aligned table, then how many targets were missed."""
    head = ("case", "subject", "baseline", "ratio", "target", "")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print(fmt.format(*head))
    print(fmt.format(*("-" * w for w in widths)))
    for r in rows:
        print(fmt.format(*r))
    misses = [r[0] for r in rows if r[5] == "MISS"]
    print(f"\n{len(misses)} target(s) missed{': ' + '; '.join(misses) if misses else ''}")


def loadavg() -> str:
    """The 1/5/15-minute load average, as text."""
    with contextlib.suppress(OSError):
        return "/".join(f"{x:.1f}" for x in os.getloadavg())
    return "?"
