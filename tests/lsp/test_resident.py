"""The language server keeps the command line's resident reader (`lsp.resident`): started after
`initialized`, answering the CLI of its store, gone with the server — shut down politely or
killed with SIGKILL — and its socket with it. Each test runs `sessionkeeper serve --stdio` as a
real subprocess (its stderr, which the resident shares, read from a file)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from tests.lsp._client import server_env
from tests.lsp.conftest import make_workspace
from tests.lsp.test_stdio import frame, initialize, request, responses, stopped

WAIT_S = 60


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    """(store, workspace): a store holding one thread started in the workspace."""
    store, workspace = tmp_path / "store", make_workspace(tmp_path / "ws")
    started = _cli(store, tmp_path, "start", "--workspace", str(workspace), "--json",
                   relayed=False)
    assert started.returncode == 0, started.stderr
    return store, workspace


def _cli(store: Path, home: Path, *args: str, relayed: bool) -> subprocess.CompletedProcess[str]:
    env = {**server_env(store, home), "NO_COLOR": "1",
           "SESSIONKEEPER_RESIDENT": "1" if relayed else "0"}
    return subprocess.run([sys.executable, "-m", "sessionkeeper", *args], capture_output=True,
                          text=True, timeout=60, env=env)


def _serve(store: Path, home: Path, log: Path, *,
           ready: str = "listening on") -> subprocess.Popen[bytes]:
    """A server with the resident on (initialized), once its resident says `ready` (listens)."""
    env = {**server_env(store, home), "SESSIONKEEPER_RESIDENT": "1", "SESSIONKEEPER_LOG": "INFO"}
    proc = subprocess.Popen([sys.executable, "-m", "sessionkeeper", "serve", "--stdio"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log.open("wb"),
                            env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(initialize())
    proc.stdin.flush()
    assert sorted(responses(proc.stdout, 1)) == [1]
    proc.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    proc.stdin.flush()
    _wait(lambda: ready in log.read_text(), log)
    return proc


def _wait(condition: object, log: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


def _relayed_equals_in_process(store: Path, home: Path, workspace: Path, log: Path) -> None:
    before = log.read_text().count("resident: relayed")
    there = _cli(store, home, "list", "--json", "--workspace", str(workspace), relayed=True)
    assert log.read_text().count("resident: relayed") == before + 1
    here = _cli(store, home, "list", "--json", "--workspace", str(workspace), relayed=False)
    assert there.returncode == here.returncode == 0
    assert there.stdout == here.stdout and len(orjson.loads(there.stdout)) == 1


def test_the_servers_resident_answers_the_cli_and_ends_with_a_polite_exit(
        setup: tuple[Path, Path], tmp_path: Path) -> None:
    """Fixture: a store with one thread; a server of it, shut down and exited as a client does."""
    store, workspace = setup
    log = tmp_path / "server.log"
    proc = _serve(store, tmp_path, log)
    _relayed_equals_in_process(store, tmp_path, workspace, log)
    assert stopped(proc) == 0
    _wait(lambda: not (store / "run" / "cli.sock").exists(), log)


def test_a_killed_server_takes_its_resident_along(setup: tuple[Path, Path],
                                                  tmp_path: Path) -> None:
    """Fixture: a store with one thread; its server killed with SIGKILL: the resident sees its
    stdin end, stops and removes its socket; the CLI then answers in-process."""
    store, workspace = setup
    log = tmp_path / "server.log"
    proc = _serve(store, tmp_path, log)
    _relayed_equals_in_process(store, tmp_path, workspace, log)
    proc.kill()
    proc.wait(timeout=WAIT_S)
    _wait(lambda: "the language server is gone" in log.read_text(), log)
    _wait(lambda: not (store / "run" / "cli.sock").exists(), log)
    again = _cli(store, tmp_path, "list", "--json", "--workspace", str(workspace), relayed=True)
    assert again.returncode == 0 and len(orjson.loads(again.stdout)) == 1
    assert log.read_text().count("resident: relayed") == 1


def test_a_second_window_takes_the_resident_over_when_the_first_closes(
        setup: tuple[Path, Path], tmp_path: Path) -> None:
    """Fixture: a store with one thread; two servers of it. The second's resident leaves the
    store to the first's; once the first server is killed (and its resident gone), a listing of
    the second starts a resident again, which answers the CLI."""
    store, workspace = setup
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = _serve(store, tmp_path, first_log)
    second = _serve(store, tmp_path, second_log, ready="another resident serves")
    try:
        first.kill()
        first.wait(timeout=WAIT_S)
        _wait(lambda: not (store / "run" / "cli.sock").exists(), first_log)
        assert second.stdin is not None and second.stdout is not None
        rid = 10
        while "listening on" not in second_log.read_text():  # each listing may start it again
            rid += 1
            second.stdin.write(request(rid, "session/list", {}))
            second.stdin.flush()
            assert sorted(responses(second.stdout, 1)) == [rid]
            time.sleep(0.5)
            assert rid < 10 + WAIT_S * 2, second_log.read_text()
        _relayed_equals_in_process(store, tmp_path, workspace, second_log)
    finally:
        for proc in (first, second):
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=WAIT_S)
