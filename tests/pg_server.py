"""A real PostgreSQL server for the tests and benchmarks: initdb and pg_ctl on a temporary
directory, listening on a free loopback port only, password (SCRAM) authentication.

PostgreSQL refuses to run as root: under root the server runs as the `postgres` system user
(created by Debian's package) and its directory is handed to that user; otherwise as ourselves.
Nothing outside the temporary directory is touched, and `close()` stops the server and removes it.
Install the binaries with tests/postgres/install-postgresql.sh (`make test` runs it).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

INSTALL = "tests/postgres/install-postgresql.sh"
USER = "sessionkeeper"
PASSWORD = "pg-Secret-7f3a9c"  # the test server's own; tests search output for it


class Unavailable(RuntimeError):
    """No PostgreSQL server can be started here (binaries missing, initdb failed, ...)."""


def bindir() -> Path:
    """The directory of the newest installed server's binaries (Debian: /usr/lib/postgresql/N)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name
                   .isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(os.path.realpath(initdb)).parent
    raise Unavailable(f"no PostgreSQL server binaries (initdb); run {INSTALL}")


def free_port() -> int:
    """A loopback TCP port nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgServer:
    """One private server: `url()` connects to it; `stop()`/`start()` cut and restore it."""

    def __init__(self) -> None:
        self.bin = bindir()
        self.root = Path(tempfile.mkdtemp(prefix="sk-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self._as: dict[str, Any] = {}
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise Unavailable("running as root and there is no `postgres` user to run the "
                                  f"server as; run {INSTALL}") from exc
            self._as = {"user": owner.pw_uid, "group": owner.pw_gid}
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
        os.chmod(self.root, 0o700)
        secret = self.root / "pwfile"
        secret.write_text(PASSWORD + "\n")
        if self._as:
            os.chown(secret, self._as["user"], self._as["group"])
        self._run("initdb", "-D", str(self.data), "-U", USER, "--auth=scram-sha-256",
                  f"--pwfile={secret}", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
        secret.unlink()
        self.start()

    def _run(self, tool: str, *args: str, timeout: float = 120) -> str:
        done = subprocess.run([str(self.bin / tool), *args], capture_output=True, text=True,
                              timeout=timeout, cwd=self.root, **self._as)
        if done.returncode != 0:
            raise Unavailable(f"{tool} failed ({done.returncode}): {done.stderr.strip()[-2000:]}"
                              f"\n{self.server_log()}")
        return done.stdout

    def server_log(self) -> str:
        """The end of the server's log (for a failure message)."""
        try:
            return self.log.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def start(self) -> None:
        """Start (or restart) the server on its port; returns once it accepts connections."""
        options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories='' "
                   "-c fsync=off -c full_page_writes=off -c max_connections=60 "
                   "-c shared_buffers=32MB")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w",
                  "-t", "60", "start")
        deadline = time.monotonic() + 30
        while not self.accepts():
            if time.monotonic() > deadline:
                raise Unavailable(f"the server does not accept connections\n{self.server_log()}")
            time.sleep(0.05)

    def accepts(self) -> bool:
        """True when the server takes a TCP connection."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def stop(self, *, mode: str = "fast") -> None:
        """Stop the server (`fast`: connections are cut; `immediate`: as a crash)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def url(self, *, password: str | None = PASSWORD, dbname: str = "postgres",
            host: str = "127.0.0.1", port: int | None = None) -> str:
        """A postgresql:// URL of this server (another password or port for the failure tests)."""
        secret = f":{password}" if password is not None else ""
        return f"postgresql://{USER}{secret}@{host}:{port or self.port}/{dbname}"

    def sql(self, statement: str, *, dbname: str = "postgres") -> str:
        """Run one statement with psql (the client's own program) and return its output."""
        psql = shutil.which("psql") or str(self.bin / "psql")
        done = subprocess.run([psql, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", statement,
                               self.url(dbname=dbname)], capture_output=True, text=True,
                              timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"psql: {done.stderr.strip()}")
        return done.stdout

    def close(self) -> None:
        """Stop the server (if it runs) and remove its directory."""
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(Unavailable, subprocess.TimeoutExpired):
                self.stop(mode="immediate")
        shutil.rmtree(self.root, ignore_errors=True)
