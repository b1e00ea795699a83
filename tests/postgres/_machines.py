"""Two machines on one PostgreSQL server: each a store of its own, driven by real `sessionkeeper`
processes that name their machine ($SESSIONKEEPER_MACHINE) and the server ($SESSIONKEEPER_INDEX)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.pg_server import PASSWORD

SERVER = str(Path(__file__).resolve().parents[2] / "server")


class Machine:
    """One machine: its name, its store, the server's URL; `run` is the CLI there."""

    def __init__(self, name: str, store: Path, url: str) -> None:
        self.name = name
        self.store = store
        self.url = url
        self.outputs: list[str] = []  # everything it printed, searched for the password

    def env(self) -> dict[str, str]:
        """The environment of its processes."""
        return {**os.environ, "PYTHONPATH": SERVER, "SESSIONKEEPER_MACHINE": self.name,
                "SESSIONKEEPER_INDEX": self.url, "SESSIONKEEPER_HOME": str(self.store),
                "GIT_CONFIG_GLOBAL": "/dev/null", "NO_COLOR": "1"}

    def run(self, *argv: str, stdin: str | None = None, ok: tuple[int, ...] = (0,),
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run `sessionkeeper ARGV` here; asserts its exit code is one of `ok`."""
        done = subprocess.run([sys.executable, "-m", "sessionkeeper", *argv], env=self.env(),
                              input=stdin, capture_output=True, text=True, timeout=timeout)
        self.outputs += [done.stdout, done.stderr]
        assert done.returncode in ok, (argv, done.returncode, done.stdout[-2000:],
                                       done.stderr[-2000:])
        return done

    def json(self, *argv: str, ok: tuple[int, ...] = (0,)) -> Any:
        """`run` with --json, its output decoded."""
        return json.loads(self.run(*argv, "--json", ok=ok).stdout)

    def record(self, session: str, *texts: str) -> None:
        """Append user messages to an open-able session here."""
        lines = "".join(json.dumps({"type": "message", "role": "user", "text": t}) + "\n"
                        for t in texts)
        self.run("record", "--session", session, stdin=lines)


def password_nowhere(machines: list[Machine]) -> None:
    """The server's password is in no output and no file of any machine's store."""
    for machine in machines:
        for text in machine.outputs:
            assert PASSWORD not in text
        for path in machine.store.rglob("*"):
            if path.is_file():
                assert PASSWORD.encode() not in path.read_bytes(), path
