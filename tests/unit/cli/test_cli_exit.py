"""A command's process ends without the interpreter's final collections (issue 13), its output
whole; the server's exit is left as it is (fixture: `repo`, `store_dir`, conftest; real
processes, real git)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SERVER = str(Path(__file__).resolve().parents[3] / "server")
PROBE = """
import atexit, gc, sys
atexit.register(lambda: print("frozen" if gc.get_freeze_count() else "collected", file=sys.stderr))
from sessionkeeper.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SERVER, "GIT_CONFIG_GLOBAL": "/dev/null"}
    return subprocess.run([sys.executable, "-c", PROBE, *argv], env=env, capture_output=True,
                          text=True, check=False)


def test_a_listing_exits_with_every_object_frozen_and_its_json_whole(repo: Path,
                                                                      store_dir: Path) -> None:
    """Fixture: `repo` with one thread started in it; `list --json --workspace` in a fresh
    interpreter whose own exit handler (run after the command's) reports the freeze."""
    started = _run("start", "--workspace", str(repo), "--store", str(store_dir), "--json")
    assert started.returncode == 0, started.stderr
    thread = json.loads(started.stdout)["thread_id"]
    done = _run("list", "--json", "--workspace", str(repo), "--store", str(store_dir),
                "--agents", "none")
    assert done.returncode == 0, done.stderr
    assert [row["thread_id"] for row in json.loads(done.stdout)] == [thread]
    assert done.stderr.splitlines()[-1] == "frozen"
    assert started.stderr.splitlines()[-1] == "frozen"


def test_the_server_command_keeps_the_final_collections() -> None:
    """Fixture: none; `serve --help` (argparse exits) in a fresh interpreter."""
    done = _run("serve", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "collected"
