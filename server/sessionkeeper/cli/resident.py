"""The resident reader: `python -m sessionkeeper.cli.resident SOCKET`, started by the language server.

It imports what the relayed commands load once (`PRELOADED`), listens on SOCKET (0600, in the
store's private `run/`), and for each request of `relay` forks a child that becomes the asking
process — its standard streams, working directory, umask, nice value, resource limits,
environment and command line — and runs `cli.main` there when told to: the answer is the
in-process one, without its ~50 ms of imports. The child reports its pid, then its exit status.

Invariants: one resident per socket (an exclusive lock for its whole life); a peer of another
user is refused, and so is a request of another interpreter, installation, interpreter set-up
or set of groups (`relay.installation`); when a file of the package changed since it started,
it refuses and exits, so an upgrade or an edit is never answered by old code. It ends when its
parent closes its stdin (the language server exited or was killed) and then removes its socket.
The resident itself only imports (and builds the redaction automaton, a constant of the code)
before it forks: no store, no cache, no thread of its own that a child could inherit.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import gc
import importlib
import os
import pkgutil
import resource
import select
import signal
import socket
import sys
import traceback
from typing import Any

from .. import jsontext
from ..store.private import ensure_private_dir
from .relay import EXITED, GO, LIMITS, REFUSED, STARTED, frame, installation

PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
PRELOADED = ("sessionkeeper.cli.store_commands", "sessionkeeper.cli.check", "sessionkeeper.cli.content",
             "sessionkeeper.api", "sessionkeeper.render", "sessionkeeper.redact",
             "sessionkeeper.agents", "sessionkeeper.recovery", "sessionkeeper.keeper",
             "sessionkeeper.store", "sessionkeeper.session.live", "sessionkeeper.schema",
             "filelock", "zlib_ng.zlib_ng", "ahocorasick_rs")
"""What the relayed commands load: these modules and every module of ours in the packages among
them, the shared index's aside (PostgreSQL's modules load with it); ~160 modules, ~30 MB. Not
the other surfaces, the hooks, the frameworks, nor pydantic (a start validates nothing): a
child imports whatever else it needs, as any process would."""
_LOADED_WITH_USE = (".pg_", ".remote")
ENV_LOG = "SESSIONKEEPER_LOG"
_MAX_REQUEST = 1 << 24
_FDS = 4  # stdin, stdout, stderr, working directory

Stamp = tuple[tuple[str, int, int], ...]


def fingerprint(package: str = PACKAGE) -> Stamp:
    """Every file of the package (bytecode caches aside): path, mtime and size."""
    found: list[tuple[str, int, int]] = []

    def scan(folder: str) -> None:
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    scan(entry.path)
            else:
                info = entry.stat(follow_symlinks=False)
                found.append((entry.path, info.st_mtime_ns, info.st_size))

    scan(package)
    return tuple(sorted(found))


def preload() -> int:
    """Import what the relayed commands load (`PRELOADED`); how many modules of ours are loaded."""
    for name in PRELOADED:
        module = importlib.import_module(name)
        ours = name.startswith("sessionkeeper.")
        for found in pkgutil.walk_packages(getattr(module, "__path__", ()) if ours else (),
                                           f"{name}."):
            if not any(part in found.name for part in _LOADED_WITH_USE):
                importlib.import_module(found.name)
    from ..redact import prepare

    prepare()  # the redaction automaton is a constant of the code, like the modules
    return sum(name.startswith("sessionkeeper.") for name in sys.modules)


def _say(text: str, *, info: bool = False) -> None:
    """One line on stderr (the language server's); `info`: only at $SESSIONKEEPER_LOG INFO or
    DEBUG (each relayed command, the start), else always (refusals, stops)."""
    if info and os.environ.get(ENV_LOG, "").strip().upper() not in ("INFO", "DEBUG"):
        return
    sys.stderr.write(f"sessionkeeper resident: {text}\n")
    sys.stderr.flush()


def _lock(path: str) -> int | None:
    """The resident's lock on `path`, or None when another resident holds it."""
    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _listen(path: str) -> socket.socket:
    """The listening socket at `path` (0600; a stale one left by a killed resident replaced)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(mask)
    listener.listen(64)
    return listener


def serve(path: str) -> int:
    """Answer relayed commands at `path` until the parent goes or the package changes."""
    stamp = fingerprint()  # before the imports: a file changed meanwhile is seen at once
    ensure_private_dir(os.path.dirname(path))
    lock = _lock(path)
    if lock is None:
        _say(f"another resident serves {path}")
        return 0
    loaded = preload()
    gc.collect()
    gc.freeze()  # the children share the imported modules' pages: no collection copies them
    listener = _listen(path)
    made = os.stat(path).st_ino
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    signal.signal(signal.SIGTERM, lambda _s, _f: sys.exit(0))
    _say(f"listening on {path} ({loaded} modules)", info=True)
    try:
        while True:
            ready, _, _ = select.select([listener.fileno(), 0], [], [])
            if 0 in ready and not os.read(0, 4096):
                _say("the language server is gone: stopping")
                return 0
            if listener.fileno() in ready and not _accept(listener, stamp, lock):
                return 0
    finally:
        try:
            if os.stat(path).st_ino == made:
                os.unlink(path)
        except OSError:
            pass
        os.close(lock)


def _accept(listener: socket.socket, stamp: Stamp, lock: int) -> bool:
    """Answer one connection; False when the resident must stop (its package changed)."""
    conn, _ = listener.accept()
    fds: list[int] = []
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        uid = int.from_bytes(creds[4:8], sys.byteorder)
        if uid != os.getuid():
            _say(f"refused a peer of uid {uid}")
            return True
        conn.settimeout(5.0)
        if not conn.recv(1, socket.MSG_PEEK):
            return True  # a language server asking whether one answers (`lsp.resident`)
        req, fds = _request(conn)
        if req is None or len(fds) != _FDS:
            _say("refused a malformed request")
            conn.sendall(frame(REFUSED, 1))
            return True
        ours = installation()
        if {key: req.get(key) for key in ours} != ours:
            _say(f"refused a request of another installation ({req.get('python')})")
            conn.sendall(frame(REFUSED, 2))
            return True
        if fingerprint() != stamp:
            _say("the package changed since this resident started: stopping")
            conn.sendall(frame(REFUSED, 3))
            return False
        if os.fork() == 0:
            _child((listener.fileno(), lock), conn, req, fds)
        _say(f"relayed {' '.join(req['args'])[:200]}", info=True)
        return True
    except OSError as exc:
        _say(f"a request failed: {exc}")
        return True
    finally:
        for fd in fds:
            os.close(fd)
        conn.close()


def _request(conn: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    """The request's body and the descriptors passed with it."""
    data, ancillary, _, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(_FDS * 4))
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i:i + 4], sys.byteorder, signed=True)
                    for i in range(0, usable, 4)]
    if len(data) < 4:
        return None, fds
    size = int.from_bytes(data[:4], "big")
    if size > _MAX_REQUEST:
        return None, fds
    body = data[4:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            return None, fds
        body += chunk
    try:
        req = jsontext.loads(body.decode("utf-8", "surrogateescape"))
    except ValueError:
        return None, fds
    if not (isinstance(req, dict) and isinstance(req.get("args"), list)
            and isinstance(req.get("env"), dict) and isinstance(req.get("umask"), int)):
        return None, fds
    return req, fds


def _child(held: tuple[int, ...], conn: socket.socket, req: dict[str, Any],
           fds: list[int]) -> None:
    """Become the asking process, run its command when told to, report its exit status; never
    returns (a child that cannot become it refuses, and the command runs there)."""
    try:
        for fd in held:  # the listener and the lock stay the resident's alone
            os.close(fd)
        _become(req, fds)
        conn.settimeout(None)
        conn.sendall(frame(STARTED, os.getpid()))
    except BaseException:  # noqa: BLE001 - not started: the asking process runs it itself
        with contextlib.suppress(OSError):
            conn.sendall(frame(REFUSED, 4))
        os._exit(0)
    code = 70
    try:
        if conn.recv(1) != GO:
            os._exit(0)  # the asking process gave up waiting and runs the command itself
        code = _run([str(arg) for arg in req["args"]])
    except KeyboardInterrupt:  # as the interpreter: the traceback, then the end of SIGINT
        traceback.print_exc()
        code = -signal.SIGINT
    except BaseException:  # noqa: BLE001 - whatever happens, the asking process gets a status
        code = 70
    try:
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BaseException:  # noqa: BLE001 - as above
        code = 70
    try:
        conn.sendall(frame(EXITED, code))
    finally:
        os._exit(code if code >= 0 else 128 - code)


def _become(req: dict[str, Any], fds: list[int]) -> None:
    """Take on the asking process's streams, directory, umask, nice value, limits, environment
    and arguments."""
    for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    os.fchdir(fds[3])
    os.umask(req["umask"])
    nice = req.get("nice")
    if isinstance(nice, int) and nice != os.getpriority(os.PRIO_PROCESS, 0):
        with contextlib.suppress(PermissionError):  # less nice than the resident: privileged
            os.setpriority(os.PRIO_PROCESS, 0, nice)
    for name, wanted in (req.get("limits") or {}).items():
        which = getattr(resource, name) if name in LIMITS else None
        if which is not None and list(resource.getrlimit(which)) != wanted:
            resource.setrlimit(which, (int(wanted[0]), int(wanted[1])))
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in req["env"].items()})
    _streams(req.get("streams") or {})
    sys.argv = [str(req.get("argv0") or "sessionkeeper"), *map(str, req["args"])]


def _streams(specs: dict[str, Any]) -> None:
    """The standard streams as the asking process had them (encoding, errors; tty buffering)."""
    def opened(fd: int, mode: str, spec: Any, **extra: Any) -> Any:
        if not isinstance(spec, list) or len(spec) != 2:
            return None
        return open(fd, mode, encoding=spec[0], errors=spec[1], closefd=False, **extra)  # noqa: SIM115

    sys.stdin = opened(0, "r", specs.get("stdin"))
    sys.stdout = opened(1, "w", specs.get("stdout"))
    sys.stderr = opened(2, "w", specs.get("stderr"), buffering=1)


def _run(args: list[str]) -> int:
    """`cli.main(args)` as the interpreter would run it: its status, SystemExit and all (a
    KeyboardInterrupt is the caller's to report)."""
    from . import main

    try:
        return int(main(args) or 0)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - as the interpreter: the traceback, status 1
        traceback.print_exc()
        return 1


def main(argv: list[str]) -> int:
    """`python -m sessionkeeper.cli.resident SOCKET` (2 without exactly one absolute SOCKET)."""
    if len(argv) != 1 or not os.path.isabs(argv[0]):
        _say("usage: python -m sessionkeeper.cli.resident SOCKET (an absolute path)")
        return 2
    return serve(argv[0])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
