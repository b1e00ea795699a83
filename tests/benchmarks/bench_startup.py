"""Start-up benchmark: spawn -> `initialize` response, our server vs a bare pygls server.

Run as a script (pytest does not collect bench_*.py):

    PYTHONPATH=server python tests/benchmarks/bench_startup.py [--runs 10]

Both servers run on this interpreter with the same environment; runs alternate so machine noise
hits both alike. Prints the medians, the ratio (target <= 1.2x) and what `python -X importtime`
says dominates our server's imports.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVER_DIR = Path(__file__).resolve().parents[2] / "server"
BARE_SERVER = """
from pygls.lsp.server import LanguageServer
LanguageServer("bare", "0").start_io()
"""
OURS = ["-m", "sessionkeeper", "serve", "--stdio"]  # what the VS Code extension launches


def _frame(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def _read_message(stream) -> dict:
    length = 0
    while (line := stream.readline().strip()) != b"":
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(stream.read(length))


def time_initialize(args: list[str], env: dict[str, str], workspace: str) -> float:
    """Seconds from spawn to the `initialize` response (then the server is shut down)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin and proc.stdout
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": os.getpid(), "rootUri": Path(workspace).as_uri(), "capabilities": {},
        "initializationOptions": {}}}))
    proc.stdin.flush()
    while (message := _read_message(proc.stdout)).get("id") != 1:
        pass
    elapsed = time.perf_counter() - started
    assert "result" in message, message
    for payload in ({"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
                    {"jsonrpc": "2.0", "method": "exit"}):
        proc.stdin.write(_frame(payload))
        proc.stdin.flush()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    return elapsed


def importtime_top(env: dict[str, str], count: int) -> list[tuple[int, int, str]]:
    """(self us, cumulative us, module) of the slowest imports of our server module."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c",
                          "import sessionkeeper.cli, sessionkeeper.lsp.app as s; s.create_server()"],
                         env=env, capture_output=True, text=True, check=True).stderr
    rows = []
    for line in out.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, total, name = (part.strip() for part in line[len("import time:"):].split("|"))
        rows.append((int(own), int(total), name))
    return sorted(rows, key=lambda r: r[1], reverse=True)[:count]


def heavy_modules(env: dict[str, str]) -> list[str]:
    """Modules that must not be imported at start-up but are."""
    code = ("import sys, sessionkeeper.cli, sessionkeeper.lsp.app as s; s.create_server(); "
            "print([m for m in ('git', 'pydantic', 'watchfiles', 'filelock', 'sqlite3', "
            "'zstandard', 'sessionkeeper.api', 'sessionkeeper.schema', "
            "'sessionkeeper.store.store') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    return eval(out)  # noqa: S307 - our own list literal


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per server (default 10)")
    parser.add_argument("--top", type=int, default=12, help="importtime rows to show")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SESSIONKEEPER_HOME": str(Path(tmp) / "store"),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(SERVER_DIR),
                                                           os.environ.get("PYTHONPATH")]))}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as an installed server has it
        workspace = str(Path(tmp))
        time_initialize(OURS, env, workspace)  # warm the OS cache and write .pyc once
        time_initialize(["-c", BARE_SERVER], env, workspace)
        ours, bare = [], []
        for _ in range(args.runs):
            ours.append(time_initialize(OURS, env, workspace))
            bare.append(time_initialize(["-c", BARE_SERVER], env, workspace))
        m_ours, m_bare = statistics.median(ours), statistics.median(bare)
        print(f"python {sys.version.split()[0]}, {args.runs} alternating runs each")
        print(f"sessionkeeper serve  : median {m_ours * 1000:7.1f} ms  "
              f"(min {min(ours) * 1000:.1f}, max {max(ours) * 1000:.1f})")
        print(f"bare pygls server    : median {m_bare * 1000:7.1f} ms  "
              f"(min {min(bare) * 1000:.1f}, max {max(bare) * 1000:.1f})")
        ratio = m_ours / m_bare
        print(f"ratio                : {ratio:.3f}x  (target <= 1.2x: "
              f"{'met' if ratio <= 1.2 else 'NOT met'})")
        print(f"heavy modules imported at start-up: {heavy_modules(env) or 'none'}")
        print("\npython -X importtime (sessionkeeper.cli + lsp.app; create_server()), "
              "top by cumulative time:")
        print(f"{'self ms':>8} {'cumul ms':>9}  module")
        for own, total, name in importtime_top(env, args.top):
            print(f"{own / 1000:8.1f} {total / 1000:9.1f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
