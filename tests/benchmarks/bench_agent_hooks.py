"""What the hooks cost a real agent: one turn of 100 tool calls by the real Claude Code and Codex CLIs
(pinned, from npm; offline against the fake model server on 127.0.0.1), hooks installed by
`sessionkeeper hooks install` vs none, side by side in one run (alternating, a fresh home and
repository each time), and beside them the floor: every hook event running an interpreter started
as ours is (`python -S`) that only reads its input. Each call runs PreToolUse and PostToolUse (200
hook processes per turn).

    python tests/benchmarks/bench_agent_hooks.py [--calls 100] [--rounds 3] [--agent claude|codex]

Target (issue 26): the added wall time of the turn <= 5 s. The journal is checked afterwards: every
call is in its ledger (folded by the background catch-up, or by the check itself).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "server")]

from tests.benchmarks._bench import child_env  # noqa: E402
from tests.e2e.agents.drive import Driver, install  # noqa: E402
from tests.e2e.agents.fake_models import FakeModel  # noqa: E402

SK = str(Path(sys.executable).parent / "sessionkeeper")
API = {"codex": "openai", "claude": "anthropic"}
EXTRA: list[str] = []  # more `hooks install` flags (--no-mcp)


def _sk(*args: str) -> None:
    subprocess.run([SK, *args], check=True, capture_output=True, env=child_env(), timeout=300)


def _turn(driver: Driver, calls: int) -> float:
    """Seconds of one turn of `calls` tool calls."""
    started = time.perf_counter()
    driver.run(f"Run the command {calls} times.\nRUNS: {calls} true")
    return time.perf_counter() - started


def _ledger(store: Path, agent: str, session: str) -> int:
    from sessionkeeper.api import Keeper

    journal = Keeper(store, read_only=True).read_journal(agent, session)
    return 0 if journal is None else sum(
        1 for e in journal.state["operations"].ledger.values() if e["status"] == "committed")


FLOOR = [sys.executable, "-S", "-c", "import sys; sys.stdin.buffer.read()", "sessionkeeper"]
"""The floor's hook program: an interpreter started as ours is (-S) that only reads its input
(the trailing word makes `hooks install` take it for ours, so Codex's trust is computed too)."""
MODES = ("hooks off", "floor hooks", "hooks on")


def _install_floor(agent: str, driver: Driver, store: Path) -> None:
    """Every hook event of `agent` running FLOOR, installed as `hooks install` installs ours."""
    from sessionkeeper.hooks import install as setup

    setup.install(setup.target(agent, config_dir=str(driver.root)), store_root=store,
                  store=str(store), program=FLOOR)


def bench(agent: str, *, calls: int, rounds: int) -> float:
    """Print the figures of one agent; return the added seconds (median)."""
    exe = install(agent)
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    with FakeModel(API[agent]) as fake, tempfile.TemporaryDirectory(prefix="bench-agent-") as tmp:
        for n in range(rounds + 1):  # round 0 warms the agent's and Python's caches
            order = MODES if n % 2 else MODES[::-1]
            for mode in order:
                driver = Driver(agent, exe, Path(tmp) / f"{mode.replace(' ', '-')}{n}", fake)
                store = Path(tmp) / f"store-{mode.replace(' ', '-')}{n}"
                if mode == "hooks on":
                    _sk("hooks", "install", "--agent", agent, "--config-dir", str(driver.root),
                        "--store", str(store), "--json", *EXTRA)
                elif mode == "floor hooks":
                    _install_floor(agent, driver, store)
                seconds = _turn(driver, calls)
                if mode == "hooks on":
                    assert driver.session_id is not None
                    recorded = _ledger(store, agent, driver.session_id)
                    assert recorded >= calls, f"{recorded} of {calls} calls in the ledger"
                if n:
                    times[mode].append(seconds)
    off, floor, on = (statistics.median(times[mode]) for mode in MODES)
    added = on - off
    print(f"{agent}: a turn of {calls} tool calls: hooks off {off:.2f} s, floor hooks {floor:.2f} s, "
          f"on {on:.2f} s (medians of {rounds}; on: {', '.join(f'{t:.2f}' for t in times['hooks on'])})")
    print(f"{agent}: added {added:.2f} s = {added / calls * 1000:.0f} ms a call for both hooks "
          f"(target <= 5 s: {'met' if added <= 5 else 'MISSED'}); hooks that only start "
          f"`python -S` add {floor - off:.2f} s, so ours cost {on - floor:.2f} s beyond the "
          f"interpreter ({(on - off) / max(floor - off, 1e-9):.2f}x the floor's added time)")
    return added


def main() -> int:
    """Run the benchmark for the agents asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--agent", choices=["claude", "codex", "both"], default="both")
    parser.add_argument("--no-mcp", action="store_true", help="hooks only, no MCP server")
    opts = parser.parse_args()
    if opts.no_mcp:
        EXTRA.append("--no-mcp")
    for agent in (["claude", "codex"] if opts.agent == "both" else [opts.agent]):
        bench(agent, calls=opts.calls, rounds=opts.rounds)
    print(json.dumps({"note": "Pre- and PostToolUse of every call; the fold runs in the "
                              "background catch-up"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
