"""The README's examples, run as written (paths pointed at a temp repository and store)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def block(lang: str) -> str:
    """The first fenced code block of `lang` in the README."""
    return re.search(rf"```{lang}\n(.*?)```", README, re.S).group(1)


def test_the_python_example_runs_and_resumes_ok(repo, store_dir):
    """Fixture: `repo` (a real git repository), `store_dir` as $SESSIONKEEPER_HOME."""
    code = block("python").replace("/path/to/repo", str(repo))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "SESSIONKEEPER_HOME": str(store_dir)}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok [] []")


def test_the_shell_example_runs_and_checks_ok(repo, store_dir):
    """Fixture: `repo` as the working directory; the venv's bin first on PATH."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "SESSIONKEEPER_HOME": str(store_dir), "NO_COLOR": "1",
           "PATH": bin_dir + os.pathsep + os.environ["PATH"],
           "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), os.environ.get("PYTHONPATH", "")])}
    if not (Path(bin_dir) / "sessionkeeper").exists():  # not installed: run the module instead
        shim = store_dir.parent / "bin"
        shim.mkdir()
        (shim / "sessionkeeper").write_text(f'#!/bin/sh\nexec {sys.executable} -m sessionkeeper "$@"\n')
        (shim / "sessionkeeper").chmod(0o755)
        env["PATH"] = str(shim) + os.pathsep + env["PATH"]
    done = subprocess.run(["bash", "-c", "set -e\n" + block("bash")], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "verdict  OK" in done.stdout and re.search(r"todos +1/1 done", done.stdout)
