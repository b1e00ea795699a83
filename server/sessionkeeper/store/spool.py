"""The spool of an agent session's tool hooks: the calls not yet folded into its journal.

    journals/<agent>/spool/<session id>.spool              the calls since the last fold
    journals/<agent>/spool/<session id>.<token>.folding     a spool taken by a fold, until folded
    journals/<agent>/spool/<session id>.<token>.damaged     one folded that held damaged lines
    journals/<agent>/spool/<session id>.paths               the files the session knows (shell calls)
    journals/<agent>/spool/<session id>.policy              the hook policy last found (`hooks.policy_cache`)

A spool exists from the moment its journal does (`create`); its first line is a header naming the
file's `token` (time-ordered, unique), which the journal's fold marks refer to. Every other line is
one checked hook call, framed like a rollout record (`,"crc":"%08x"}` over the bytes before it).

Invariants: a line is written whole by one write() while holding the file's exclusive flock, after
checking that the path still names the open file (a fold may have replaced it) and ending a torn
last line (a writer killed mid-write) with a newline, so no later line is ever glued to it; a
failed write is cut back off; `append` returns — and the hook acknowledges — only after fdatasync
(unless the durability is `none`); a fold takes a spool by hard-linking it to its `.folding` name
and replacing the path with a fresh spool, so nothing appended is ever dropped and no line is
folded from two files. Standard library only: this runs in every tool hook's process.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
import zlib

SPOOL = ".spool"
FOLDING = ".folding"
DAMAGED = ".damaged"
"""A folded spool file that held damaged or torn lines, kept for `fsck` (and reported)."""
PATHS = ".paths"
_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW  # read: the last byte


def spool_dir(journal_root: str) -> str:
    """The directory of the spools of one agent's journals."""
    return os.path.join(journal_root, "spool")


def spool_path(journal_root: str, session_id: str) -> str:
    """The spool file of one agent session (`session_id`: a checked, canonical UUID)."""
    return os.path.join(spool_dir(journal_root), session_id + SPOOL)


def frame(body: bytes) -> bytes:
    """One spool line from a JSON object's bytes: the CRC member last, then a newline."""
    core = body[:-1]
    return core + b',"crc":"%08x"}\n' % zlib.crc32(core)


def unframe(line: bytes) -> dict[str, object] | None:
    """The object of a whole line (without its newline and `crc`), or None when it is damaged."""
    if len(line) < 19 or line[-18:-10] != b',"crc":"' or line[-2:] != b'"}':
        return None
    if line[-10:-2] != b"%08x" % zlib.crc32(line[:-18]):
        return None
    from .. import jsontext

    try:
        value = jsontext.loads(line[:-18] + b"}")
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


_TORN = frame(b'{"torn":true}')
"""Written after a line a killed writer left torn (never acknowledged): not damage of a call."""


def new_token() -> str:
    """A fresh spool token: the time in ns (so tokens sort by creation) and 32 random bits."""
    return "%016x%s" % (time.time_ns(), os.urandom(4).hex())  # noqa: UP031 - no format spec parsing


def header(token: str, session_id: str) -> bytes:
    """The first line of a spool."""
    from .. import jsontext

    return frame(jsontext.dumps({"spool": 1, "token": token, "session_id": session_id}).encode())


def _private_dir(path: str) -> None:
    """Create the spool directory 0700 (its parents are the journal store's, already private)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        return


def create(journal_root: str, session_id: str) -> None:
    """Give a journal its spool (a no-op when it has one); durable before it returns."""
    directory = spool_dir(journal_root)
    _private_dir(directory)
    fd = os.open(spool_path(journal_root, session_id), _FLAGS | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fstat(fd).st_size == 0:
            _write(fd, header(new_token(), session_id), 0)
            os.fsync(fd)
            dfd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
    finally:
        os.close(fd)


def _cut(fd: int, size: int) -> None:
    """Cut a failed write back off (best effort: the reader tells a torn line anyway)."""
    try:
        os.ftruncate(fd, size)
    except OSError:
        return


def _write(fd: int, data: bytes, size: int) -> None:
    """Write `data` at the end (`size`) in one write(); a short or failed write is cut off."""
    try:
        done = os.write(fd, data)
        if done != len(data):
            raise OSError(errno.ENOSPC, "short write to the spool")
    except OSError:
        _cut(fd, size)
        raise


def append(journal_root: str, session_id: str, body: bytes, *, durable: bool = True) -> int | None:
    """Append one call (a JSON object's bytes) to the session's spool; the size the spool has now,
    or None when the session has no spool (its journal does not exist yet)."""
    path = spool_path(journal_root, session_id)
    line = frame(body)
    for _attempt in range(20):
        try:
            fd = os.open(path, _FLAGS)
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            st = os.fstat(fd)
            try:
                now = os.stat(path, follow_symlinks=False)
            except FileNotFoundError:
                continue  # taken by a fold between our open and our lock: open the new one
            if (now.st_ino, now.st_dev) != (st.st_ino, st.st_dev):
                continue
            size = st.st_size
            torn = size and os.pread(fd, 1, size - 1) != b"\n"  # a writer died mid-line:
            data = b"\n" + _TORN + line if torn else line  # its torn bytes end here
            _write(fd, data, size)
            if durable:
                os.fdatasync(fd)
            return size + len(data)
        finally:
            os.close(fd)
    raise OSError(errno.EAGAIN, f"the spool {path} kept being replaced")


def take(journal_root: str, session_id: str) -> list[str]:
    """Take the session's spool for folding (when it holds calls): hard-link it to its `.folding`
    name and put a fresh spool in its place. Returns every `.folding` file of the session, oldest
    first (earlier folds that did not finish included)."""
    path = spool_path(journal_root, session_id)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        fd = -1
    if fd >= 0:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            first = os.pread(fd, 4096, 0).split(b"\n", 1)
            if len(first) == 2 and first[1]:  # calls after the header
                found = unframe(first[0])
                token = str(found.get("token")) if found else new_token()
                folding = os.path.join(spool_dir(journal_root), f"{session_id}.{token}{FOLDING}")
                if not os.path.lexists(folding):  # else an earlier fold linked it, then stopped
                    os.link(path, folding)
                fresh = f"{path}.{os.getpid()}.tmp"
                tmp = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
                try:
                    _write(tmp, header(new_token(), session_id), 0)
                    os.fsync(tmp)
                finally:
                    os.close(tmp)
                os.replace(fresh, path)
        finally:
            os.close(fd)
    return taken(journal_root, session_id)


def taken(journal_root: str, session_id: str, *, ending: str = FOLDING) -> list[str]:
    """The session's `.folding` files (or those with another `ending`), oldest first."""
    directory = spool_dir(journal_root)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    prefix = session_id + "."
    return [os.path.join(directory, name) for name in sorted(names)
            if name.startswith(prefix) and name.endswith(ending)]


class Lines:
    """What one spool file holds: its token, its calls (the end offset of the line, the object),
    the damaged lines (offset, reason), the torn ones (offsets: lines a killed writer left, never
    acknowledged), and whether its last bytes are an unfinished line."""

    __slots__ = ("token", "calls", "damaged", "torn", "unfinished")

    def __init__(self) -> None:
        self.token: str | None = None
        self.calls: list[tuple[int, dict[str, object]]] = []
        self.damaged: list[tuple[int, str]] = []
        self.torn: list[int] = []
        self.unfinished = False


def read(path: str) -> Lines:
    """Read a spool file (a missing file reads as empty); never raises for bad content."""
    out = Lines()
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return out
    at = last = 0
    while at < len(data):
        end = data.find(b"\n", at)
        if end < 0:
            out.unfinished = True  # being written, or its writer died: never a call
            break
        found = unframe(data[at:end])
        if found is None:
            out.damaged.append((at, "damaged line (bad checksum or not JSON)"))
        elif found.get("torn") is True and out.damaged and out.damaged[-1][0] == last:
            out.torn.append(out.damaged.pop()[0])
        elif "spool" in found and out.token is None and at == 0:
            out.token = str(found.get("token"))
        else:
            out.calls.append((end + 1, found))
        last, at = at, end + 1
    return out


def known_paths(journal_root: str, session_id: str) -> list[str]:
    """The workspace-relative paths the session knows (its history as of the last fold, and the
    files tool calls named since)."""
    try:
        with open(os.path.join(spool_dir(journal_root), session_id + PATHS), "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return []
    return [p.decode("utf-8", "replace") for p in dict.fromkeys(raw.split(b"\0")) if p]


def add_known(journal_root: str, session_id: str, paths: list[str]) -> None:
    """Add paths to the session's known paths (one append; duplicates are read once)."""
    if not paths:
        return
    name = os.path.join(spool_dir(journal_root), session_id + PATHS)
    fd = os.open(name, _FLAGS | os.O_CREAT, 0o600)
    try:
        os.write(fd, b"".join(p.encode() + b"\0" for p in paths))
    finally:
        os.close(fd)


def set_known(journal_root: str, session_id: str, paths: list[str]) -> None:
    """Replace the session's known paths (by a fold, from the journal's history)."""
    directory = spool_dir(journal_root)
    _private_dir(directory)
    name = os.path.join(directory, session_id + PATHS)
    tmp = f"{name}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, b"".join(p.encode() + b"\0" for p in dict.fromkeys(paths)))
    finally:
        os.close(fd)
    os.replace(tmp, name)


def pending(journal_root: str, session_id: str) -> bool:
    """True when the session has spooled calls that may not be folded yet (or a spool file a fold
    did not finish)."""
    if taken(journal_root, session_id):
        return True
    try:
        with open(spool_path(journal_root, session_id), "rb") as handle:
            head = handle.read(4096)
            size = os.fstat(handle.fileno()).st_size
    except FileNotFoundError:
        return False
    end = head.find(b"\n")
    return end < 0 or size > end + 1
