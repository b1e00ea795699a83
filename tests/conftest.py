"""Shared fixtures: temporary stores, real git workspaces, the fixtures directory, open files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under CI a skipped test fails the run: a skip there is a test that did not run (every
    conditional skip fails under CI already; this catches one that does not)."""
    import os

    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter is not None else 0
    if os.environ.get("CI") and skipped and session.exitstatus == 0:
        if reporter is not None:
            reporter.write_line(f"CI: {skipped} test(s) skipped; a skip in CI is a failure",
                                red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def git(cwd: Path, *args: str) -> str:
    """Run a real git command in `cwd` and return its stdout."""
    env = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:  # the error says what git said
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout,
                                            done.stderr) from RuntimeError(done.stderr.strip())
    return done.stdout.strip()


def init_repo(root: Path, files: dict[str, str], *, message: str = "initial") -> Path:
    """A real git repository at `root` on `main` with `files` in one commit."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for name, text in files.items():
        (root / name).write_text(text)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", message)
    return root


def open_files(under: Path) -> list[str]:
    """The files under `under` this process holds open (its /proc/self/fd links)."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed meanwhile
            continue
        if target.startswith(f"{under}{os.sep}"):
            out.append(target)
    return sorted(out)


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    """An empty, private store directory."""
    return tmp_path / "store"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repository on branch fix/payment with two source files, one commit."""
    root = init_repo(tmp_path / "repo-a", {"payment.py": "def charge(amount):\n    return amount\n",
                                            "test_payment.py": "from payment import charge\n"})
    git(root, "checkout", "-q", "-b", "fix/payment")
    return root


@pytest.fixture(autouse=True, scope="session")
def _no_real_agent_homes(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test (and every process it starts) reads empty agent homes unless it names its own:
    the machine's ~/.codex, ~/.claude and ~/.hermes never leak into a listing."""
    import os

    empty = tmp_path_factory.mktemp("agent-homes")
    for var, name in (("CODEX_HOME", "codex"), ("CLAUDE_CONFIG_DIR", "claude"), ("HERMES_HOME", "hermes")):
        (empty / name).mkdir()
        os.environ[var] = str(empty / name)


@pytest.fixture(autouse=True, scope="session")
def _no_background_catch_up() -> None:
    """Tool hooks started by a test spool only: no detached catch-up folds behind the test's back
    (tests of the catch-up, and the benchmarks, turn it on for themselves)."""
    import os

    os.environ.setdefault("SESSIONKEEPER_CATCH_UP", "0")


@pytest.fixture(autouse=True, scope="session")
def _no_resident_reader() -> None:
    """No language server a test starts keeps a resident reader, and no CLI process relays to one
    (tests/e2e/test_resident.py and the benchmarks turn it on for themselves): a command runs the
    same way whatever ran a moment before."""
    import os

    os.environ.setdefault("SESSIONKEEPER_RESIDENT", "0")
@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL server for the whole run (tests/pg_server.py), stopped and removed at
    the end. One that cannot start FAILS under CI; elsewhere the test skips, saying why."""
    import os

    from tests.pg_server import INSTALL, PgServer, Unavailable

    try:
        server = PgServer()
    except Unavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL unavailable in CI: {exc}")
        pytest.skip(f"PostgreSQL unavailable: {exc} (developer machine; CI fails instead; see "
                    f"{INSTALL})")
    try:
        yield server
    finally:
        server.close()


_DATABASES = iter(range(1, 1 << 30))


@pytest.fixture
def pg_url(pg_server) -> str:
    """The URL of a new, empty database on `pg_server` (one per test; the server is restarted
    first if a test stopped it)."""
    if not pg_server.accepts():
        pg_server.start()
    name = f"t{next(_DATABASES)}"
    pg_server.sql(f"CREATE DATABASE {name}")
    return pg_server.url(dbname=name)
