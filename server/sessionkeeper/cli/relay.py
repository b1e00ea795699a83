"""A command answered by the editor's resident reader (`resident`), when one is running.

`list`, `show`, `--check-resume` and `start` spend ~50 ms importing the Keeper before a few ms of
work. While the editor's language server runs, a resident process of the same installation keeps
those modules imported; the command line, its environment, working directory, umask, nice value
and standard streams go to it over a user-only Unix socket, and a child forked there runs the command exactly
as this process would (`cli.main`), writing to this process's own streams. Its exit status comes
back and becomes this process's.

Invariants: nothing is relayed unless every step holds — the resident's socket answers, it runs as
this user, it is of this interpreter and this installation, and its child has started within
`WAIT_START_S`; otherwise (`None`) the command runs here, as it always did. The child runs nothing
until told to (`GO`), so a command never runs in both places. From then on the answer is the
child's: the signals that would stop this process are passed on to it (those ignored here are
not), a child that ends of one (SIGINT's traceback, SIGTERM, SIGHUP) makes this process end of
it too, as the command would have here, and a child that ends without an exit status otherwise
is said so (70), never run a second time. Standard library only (this runs before the CLI's
modules load): `_socket`, not `socket`, whose enums cost more than the relay.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C module: `signal` costs ~2 ms
import os
import sys

from .. import jsontext

try:
    import _socket
except ImportError:  # pragma: no cover - a Python built without sockets
    _socket = None  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

STARTED, REFUSED, EXITED = b"P", b"R", b"X"
"""The resident's frames: a tag and a 4-byte number — the child's pid, a refusal, its exit status
(-N: it ended of signal N, as `subprocess` says it)."""
GO = b"G"
"""This process's answer to STARTED: run it (the child runs nothing before, so a command that
timed out here and runs here instead never runs twice)."""
FRAME = 5
WAIT_START_S = 2.0
"""How long the resident may take to start the child before the command runs here instead."""
LIMITS = ("RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_STACK",
          "RLIMIT_CPU", "RLIMIT_CORE")
"""The resource limits a child takes on from this process (`ulimit` in its shell)."""
_FORWARDED = (2, 15, 1)  # SIGINT, SIGTERM, SIGHUP: what a terminal or a CI runner sends


def relayed(args: Sequence[str]) -> int | None:
    """The exit status of `args` run by the resident of the default store (None: run it here)."""
    from ..store.home import default_root, resident_socket

    path = resident_socket(default_root())
    return None if path is None else relay(args, path)


def frame(tag: bytes, number: int) -> bytes:
    """One frame of the resident's answer."""
    return tag + number.to_bytes(4, "big", signed=True)


def installation() -> dict[str, object]:
    """What a resident must share with this process: the interpreter, the package's folder, what
    the interpreter settled as it started (-O, dev mode, the encodings it reads files in), and
    the user's groups (they decide what the command may read and whose files it makes)."""
    import _locale
    import codecs

    text = "utf-8" if sys.flags.utf8_mode else _locale.nl_langinfo(_locale.CODESET)
    return {"python": os.path.realpath(sys.executable),
            "package": os.path.dirname(os.path.dirname(os.path.realpath(__file__))),
            "interpreter": [sys.flags.optimize, sys.flags.dev_mode, sys.getfilesystemencoding(),
                            sys.getfilesystemencodeerrors(), codecs.lookup(text).name],
            "groups": [os.getgid(), sorted(os.getgroups())]}


def limits() -> dict[str, list[int]]:
    """This process's resource limits (`LIMITS`: soft, hard), which the child takes on."""
    import resource

    return {name: list(resource.getrlimit(getattr(resource, name))) for name in LIMITS}


def request(args: Sequence[str]) -> bytes:
    """The request: the command line and everything of this process the command may read."""
    mask = os.umask(0)
    os.umask(mask)
    streams = {name: [stream.encoding, stream.errors] if stream is not None else None
               for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout),
                                    ("stderr", sys.stderr))}
    body = jsontext.dumps({"v": 1, **installation(), "argv0": sys.argv[0] if sys.argv else "",
                           "args": list(args), "env": dict(os.environ), "umask": mask,
                           "nice": os.getpriority(os.PRIO_PROCESS, 0), "limits": limits(),
                           "streams": streams}
                          ).encode("utf-8", "surrogateescape")
    return len(body).to_bytes(4, "big") + body


def connect(path: str) -> _socket.socket | None:
    """A connection to the resident listening at `path`, when it runs as this user (else None)."""
    if _socket is None or not hasattr(_socket, "SO_PEERCRED"):
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
        creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    except OSError:
        sock.close()
        return None
    if int.from_bytes(creds[4:8], sys.byteorder) != os.getuid():
        sock.close()
        return None
    return sock


def _read(sock: _socket.socket, size: int) -> bytes:
    """`size` bytes, or fewer when the resident's side closed."""
    got = b""
    while len(got) < size:
        chunk = sock.recv(size - len(got))
        if not chunk:
            break
        got += chunk
    return got


def relay(args: Sequence[str], path: str) -> int | None:
    """The exit status of `args` run by the resident at `path`; None when it did not start it."""
    sock = connect(path)
    if sock is None:
        return None
    try:
        return _ask(sock, args)
    finally:
        sock.close()


def _ask(sock: _socket.socket, args: Sequence[str]) -> int | None:
    cwd = None
    try:
        cwd = os.open(".", os.O_RDONLY | os.O_CLOEXEC)
        if cwd <= 2:
            return None  # a standard stream is closed here: the child could not have it so
        fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (0, 1, 2, cwd))
        sock.settimeout(WAIT_START_S)
        sock.sendmsg([request(args)], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        started = _read(sock, FRAME)
    except (OSError, ValueError):  # no stream to pass, a timeout, a resident gone
        return None
    finally:
        if cwd is not None:
            os.close(cwd)
    if len(started) < FRAME or started[:1] != STARTED:
        return None  # refused (another installation, changed files) or gone: run it here
    child = int.from_bytes(started[1:], "big", signed=True)
    received, replaced = _forward_signals(child)  # before GO: no signal can miss the child
    try:
        sock.sendall(GO)
    except OSError:  # the child is gone before it ran anything
        if received:
            return _end_of(received[-1])
        for signum, handler in replaced.items():
            _signal.signal(signum, handler)
        return None
    sock.settimeout(None)
    try:
        ended = _read(sock, FRAME)
    except OSError:
        ended = b""
    if len(ended) == FRAME and ended[:1] == EXITED:
        code = int.from_bytes(ended[1:], "big", signed=True)
        return _end_of(-code) if code < 0 else code
    if received:  # it ended of the signal passed on to it (SIGTERM, SIGHUP: no status to send)
        return _end_of(received[-1])
    os.write(2, f"sessionkeeper: the resident reader's process {child} ended without an exit "
                f"status; its output above may be partial\n".encode())
    return 70


def _forward_signals(child: int) -> tuple[list[int], dict[int, object]]:
    """Pass the signals that would end this process to the child instead, except those ignored
    here (the command would ignore them here too); the signals passed on (a list it fills) and
    the handlers replaced."""
    received: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        try:
            os.kill(child, signum)
        except OSError:
            return

    replaced = {}
    for signum in _FORWARDED:
        handler = _signal.getsignal(signum)
        if handler != _signal.SIG_IGN:
            replaced[signum] = handler
            _signal.signal(signum, forward)
    return received, replaced


def _end_of(signum: int) -> int:
    """End this process of `signum`, as the command ended of it; 128 + signum if it is blocked."""
    _signal.signal(signum, _signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    return 128 + signum
