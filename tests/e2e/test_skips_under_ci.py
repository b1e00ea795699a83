"""No conditional skip can fire in CI: each of the suite's own skips — PostgreSQL unavailable
(`tests/conftest.py:pg_server`), a fault tool unavailable (`tests/faults/conftest.py:unavailable`),
strace missing (`tests/postgres/test_sync_faults.py`) — fails the test when `CI` is set, and any
other skip fails the run (`tests/conftest.py:pytest_sessionfinish`). Each guard runs here as it
runs in the suite, in a real pytest process, with `CI` set (as `.ci/run` sets it) and unset.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = '''
import tests.pg_server as pg
from tests.conftest import pg_server, pytest_sessionfinish  # noqa: F401 - the suite's own


class NoServer:
    """PgServer as it is on a machine without PostgreSQL."""

    def __init__(self):
        raise pg.Unavailable("probe: no PostgreSQL server binaries")


pg.PgServer = NoServer
'''

PROBES = '''
import pytest

from tests.faults.conftest import unavailable
from tests.postgres.test_sync_faults import _slowed_sync


def test_postgres(pg_server):
    pass


def test_fault_tool():
    unavailable("probe: no fault tool")


def test_strace(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no strace on it
    _slowed_sync(None)


def test_any_other_skip():
    pytest.skip("probe: a skip the suite does not guard")
'''


def _run(probe_dir: Path, name: str, *, ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "server")])
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-c", str(probe_dir / "pytest.ini"), "--rootdir", str(probe_dir),
                           f"{probe_dir / 'test_probes.py'}::{name}"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=probe_dir)


@pytest.fixture
def probe_dir(tmp_path: Path) -> Path:
    """A test folder of probes that hit each guard, with the suite's hooks and fixtures."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_probes.py").write_text(PROBES)
    return tmp_path


@pytest.mark.parametrize("name", ["test_postgres", "test_fault_tool", "test_strace"])
def test_a_guarded_skip_fails_under_ci_and_skips_elsewhere(probe_dir: Path, name: str) -> None:
    """Fixture: `probe_dir`; the probe whose tool is missing, run with and without `CI`."""
    there = _run(probe_dir, name, ci=True)
    assert there.returncode == 1, there.stdout + there.stderr
    assert "skipped" not in there.stdout and ("1 failed" in there.stdout or "1 error" in there.stdout)
    here = _run(probe_dir, name, ci=False)
    assert here.returncode == 0 and "1 skipped" in here.stdout, here.stdout + here.stderr


def test_any_other_skip_fails_a_ci_run(probe_dir: Path) -> None:
    """Fixture: `probe_dir`; a test that skips without a guard: under `CI` the run fails and says
    why; elsewhere it is a skip."""
    there = _run(probe_dir, "test_any_other_skip", ci=True)
    assert there.returncode == 1, there.stdout + there.stderr
    assert "1 skipped" in there.stdout and "a skip in CI is a failure" in there.stdout
    here = _run(probe_dir, "test_any_other_skip", ci=False)
    assert here.returncode == 0 and "1 skipped" in here.stdout, here.stdout + here.stderr


def test_the_ci_entry_point_sets_ci() -> None:
    """No fixture: `.ci/run` exports CI (kept when the runner set one) before `make test`."""
    script = (ROOT / ".ci" / "run").read_text()
    assert 'export CI="${CI:-true}"' in script
    assert script.index("export CI=") < script.index("make test")
