"""The resident reader (`cli.resident`) and the CLI's relay to it (`cli.relay`), as real processes.

Every relayed command gives what the same command gives in-process — stdout, stderr and exit
status, byte for byte — and the resident's log proves it was relayed. A resident that is killed,
refuses, or runs older code than is installed is never used: the command runs in-process.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson
import pytest

from sessionkeeper.cli import relay

from ..conftest import git
from ._resident import Resident

SERVER = Path(__file__).resolve().parents[2] / "server"


def _same(resident: Resident, *args: str, cwd: Path | None = None,
          limit: tuple[int, int] | None = None, **env: str) -> int:
    """Run `args` relayed and in-process; assert both give the same; the exit status."""
    before = resident.relayed()
    there = resident.run(*args, cwd=cwd, limit=limit, **env)
    assert resident.relayed() == before + 1, resident.lines()
    here = resident.run(*args, relayed=False, cwd=cwd, limit=limit, **env)
    assert (there.returncode, there.stdout, there.stderr) == \
        (here.returncode, here.stdout, here.stderr)
    return there.returncode


def test_relayed_commands_answer_as_in_process(resident: Resident, thread: str, repo: Path,
                                               tmp_path: Path) -> None:
    """Fixture: a resident of a store with one thread in `repo` (branch fix/payment)."""
    workspace = str(repo)
    assert _same(resident, "list", "--json", "--workspace", workspace) == 0
    assert _same(resident, "list", "--workspace", workspace) == 0
    assert _same(resident, "show", thread, "--json") == 0
    assert _same(resident, "--check-resume", thread, "--workspace", workspace) == 0
    assert _same(resident, "--check-resume", "--latest", "--workspace", ".", "--json",
                 cwd=repo) == 0  # its working directory is the asking process's
    git(repo, "checkout", "-q", "main")
    assert _same(resident, "--check-resume", thread, "--workspace", workspace, "--json") == 10
    assert _same(resident, "--check-resume", thread, "--workspace", workspace,
                 GITHUB_ACTIONS="true") == 10  # its environment too: annotations on stderr
    assert _same(resident, "--check-resume", thread, "--workspace", workspace,
                 "--allow-drift") == 0
    assert _same(resident, "--check-resume", "00000000-0000-4000-8000-000000000000",
                 "--workspace", workspace) == 66
    assert _same(resident, "list", "--limit", "0") == 2  # argparse's usage error
    assert _same(resident, "--check-resume", "--workspace", workspace) == 2  # parser.error
    assert _same(resident, "list", "--help") == 0
    other = tmp_path / "other-store"
    assert _same(resident, "list", "--json", "--store", str(other)) == 0  # its own arguments


def test_the_child_takes_on_the_asking_process_limits(tmp_path: Path, repo: Path) -> None:
    """Fixture: the per-user default store (which a listing may index) with one thread and no
    index; listed under `ulimit -f 0`: the index cannot be written, relayed or not (exit 70);
    without the limit the relayed listing writes it."""
    store = tmp_path / "data" / "sessionkeeper"
    resident = Resident(store, tmp_path / "resident.log", default=True)
    try:
        assert resident.run("start", "--workspace", str(repo), relayed=False).returncode == 0
        for index in store.glob("state.db*"):
            index.unlink()
        assert _same(resident, "list", "--json", limit=(0, resource.RLIM_INFINITY)) == 70
        assert not any(index.stat().st_size for index in store.glob("state.db*"))
        assert _same(resident, "list", "--json") == 0
        assert (store / "state.db").stat().st_size > 0
    finally:
        resident.stop()


def test_a_relayed_start_writes_the_thread_as_in_process(resident: Resident, repo: Path) -> None:
    """Fixture: a resident; `start` relayed (its thread then read in-process), `fsck` and
    `record` (the other writers) run in-process."""
    started = resident.run("start", "--workspace", str(repo), "--title", "relayed", "--json")
    assert started.returncode == 0 and started.stderr == "" and resident.relayed() == 1
    ids = orjson.loads(started.stdout)
    shown = resident.run("show", ids["thread_id"], "--json", relayed=False)
    assert shown.returncode == 0 and ids["thread_id"] in shown.stdout
    recorded = resident.run("record", "--session", ids["session_id"], relayed=False)
    assert recorded.returncode == 0, recorded.stderr
    check = resident.run("--check-resume", ids["thread_id"], "--workspace", str(repo),
                         relayed=False)
    assert check.returncode == 0 and "verdict  OK" in check.stdout
    assert resident.run("fsck").returncode == 0
    assert resident.run("record", "--session", ids["session_id"]).returncode == 0
    assert resident.relayed() == 1


def test_a_killed_resident_is_passed_by(resident: Resident, thread: str, repo: Path) -> None:
    """Fixture: a resident killed with SIGKILL, its socket left behind."""
    resident.proc.kill()
    resident.proc.wait(timeout=10)
    assert os.path.exists(resident.socket)
    here = resident.run("--check-resume", thread, "--workspace", str(repo), relayed=False)
    there = resident.run("--check-resume", thread, "--workspace", str(repo))
    assert there.returncode == 0 and (there.stdout, there.stderr) == (here.stdout, here.stderr)
    assert resident.relayed() == 0
    again = Resident(resident.store, resident.log.with_name("again.log"))  # replaces the socket
    try:
        assert _same(again, "list", "--json") == 0
    finally:
        again.stop()
    assert not os.path.exists(resident.socket)  # a resident that stops removes its socket


def test_a_second_resident_of_a_store_leaves_it_to_the_first(resident: Resident,
                                                             tmp_path: Path) -> None:
    """Fixture: a resident; another started for the same socket exits at once."""
    second = subprocess.run([sys.executable, "-m", "sessionkeeper.cli.resident", resident.socket],
                            stdin=subprocess.PIPE, capture_output=True, text=True, timeout=60,
                            env=resident.env(True))
    assert second.returncode == 0 and "another resident serves" in second.stderr
    assert _same(resident, "list", "--json") == 0


def test_the_resident_stops_with_its_parent(resident: Resident) -> None:
    """Fixture: a resident whose stdin closes (its language server exited)."""
    assert resident.proc.stdin is not None
    resident.proc.stdin.close()
    assert resident.proc.wait(timeout=10) == 0
    assert not os.path.exists(resident.socket)
    assert any("the language server is gone" in line for line in resident.lines())


def test_a_resident_of_older_code_refuses_and_stops(store_dir: Path, tmp_path: Path,
                                                    thread: str, repo: Path) -> None:
    """Fixture: the package copied, a resident of the copy, then one file of the copy changed."""
    copy = tmp_path / "installed"
    shutil.copytree(SERVER / "sessionkeeper", copy / "sessionkeeper",
                    ignore=shutil.ignore_patterns("__pycache__"))
    resident = Resident(store_dir, tmp_path / "resident.log", pythonpath=copy)
    try:
        assert _same(resident, "list", "--json") == 0
        with (copy / "sessionkeeper" / "render.py").open("a") as changed:
            changed.write("\n# upgraded\n")
        here = resident.run("--check-resume", thread, "--workspace", str(repo))
        assert here.returncode == 0 and "verdict  OK" in here.stdout, here.stderr
        assert resident.proc.wait(timeout=10) == 0
        assert any("the package changed" in line for line in resident.lines())
        assert resident.relayed() == 1 and not os.path.exists(resident.socket)
    finally:
        resident.stop()


def test_a_request_of_another_installation_is_refused(resident: Resident) -> None:
    """Fixture: a resident; a request naming another interpreter gets a refusal, not a child."""
    sock = relay.connect(resident.socket)
    assert sock is not None
    body = orjson.dumps({"v": 1, "python": "/elsewhere/bin/python", "package": "/elsewhere",
                         "args": ["list"], "env": {}, "umask": 0o22, "streams": {}})
    fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2, 0))
    try:
        import _socket

        sock.sendmsg([len(body).to_bytes(4, "big") + body],
                     [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        assert relay._read(sock, relay.FRAME) == relay.frame(relay.REFUSED, 2)
    finally:
        sock.close()
    assert any("another installation" in line for line in resident.lines())
    assert _same(resident, "list", "--json") == 0  # and it goes on serving
    optimized = resident.run("list", "--json", PYTHONOPTIMIZE="1")  # an interpreter set otherwise
    assert optimized.returncode == 0 and resident.relayed() == 1
    assert sum("another installation" in line for line in resident.lines()) == 2
    if os.geteuid() != 0:
        pytest.fail("this test changes groups: run it as root (CI and the dev machines do)")
    grouped = subprocess.run([sys.executable, "-m", "sessionkeeper", "list", "--json"],
                             capture_output=True, text=True, timeout=60, env=resident.env(True),
                             extra_groups=[*os.getgroups(), 65534])  # one group more
    assert grouped.returncode == 0 and grouped.stdout == optimized.stdout
    assert resident.relayed() == 1
    assert sum("another installation" in line for line in resident.lines()) == 3


def test_a_peer_of_another_user_is_refused(store_dir: Path, tmp_path: Path) -> None:
    """Fixture: a resident whose socket is open to everyone (as it never is: its folder is the
    store's, 0700, and it is 0600); a process of user nobody connects and is refused unanswered."""
    if os.geteuid() != 0:
        pytest.fail("this test changes users: run it as root (CI and the dev machines do)")
    shared = Path(tempfile.mkdtemp(prefix="sk-peer-"))
    resident = Resident(store_dir, tmp_path / "resident.log", socket=str(shared / "cli.sock"))
    try:
        shared.chmod(0o755)
        os.chmod(resident.socket, 0o777)
        code = ("import os, socket, sys\n"  # everything imported before the user changes
                "os.setgid(65534); os.setuid(65534)\n"
                "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                "s.connect('cli.sock')\n"  # relative: no folder above it need be open to nobody
                "sys.exit(0 if s.recv(5) == b'' else 1)\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60, cwd=shared)
        assert done.returncode == 0, done.stderr
        resident.wait_for("refused a peer of uid 65534")
        assert resident.relayed() == 0
    finally:
        resident.stop()
        shutil.rmtree(shared, ignore_errors=True)


RELAY_PROBE = """
import sys
sys.argv = ["sessionkeeper", *sys.argv[2:]]
from sessionkeeper.cli import main
code = main()
loaded = sorted(sys.modules)
import json
with open({path!r}, "w") as out:
    json.dump({{"code": code, "modules": loaded}}, out)
"""


def test_a_relayed_command_loads_only_the_relay(resident: Resident, tmp_path: Path) -> None:
    """Fixture: a resident; the asking process of a relayed listing loads a handful of modules of
    ours and none of the standard library's costly ones (dataclasses, typing, json, re, enum)."""
    found = tmp_path / "loaded.json"
    bare = subprocess.run([sys.executable, "-c", "import sys; print(' '.join(sys.modules))"],
                          capture_output=True, text=True, check=True, env=resident.env(True))
    done = subprocess.run([sys.executable, "-c", RELAY_PROBE.format(path=str(found)), "-",
                           "list", "--json"], capture_output=True, text=True, timeout=60,
                          env=resident.env(True))
    assert done.returncode == 0 and orjson.loads(done.stdout)[0]["title"] == "resident story"
    probe = orjson.loads(found.read_bytes())
    assert probe["code"] == 0 and resident.relayed() == 1
    added = set(probe["modules"]) - set(bare.stdout.split())
    ours = {name for name in added if name.startswith("sessionkeeper")}
    assert ours == {"sessionkeeper", "sessionkeeper.cli", "sessionkeeper.cli.relay",
                    "sessionkeeper.jsontext", "sessionkeeper.store", "sessionkeeper.store.home"}
    assert added & {"dataclasses", "typing", "json", "re", "enum", "argparse", "orjson",
                    "socket", "signal", "pathlib"} == set(), sorted(added)
