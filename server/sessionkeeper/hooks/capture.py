"""A tool hook's look at the files a call touches, at the time of the call.

`read` classifies one workspace file as `recovery.content` would record it (the same rules:
`recovery.content_rules`) and returns what the spool keeps of it — `None` when there is no file,
else `{"hash", "size", "content"}` with `content` "stored" (the bytes come along, to be stashed
as a raw blob), or why only the hash is kept ("secret_file", "binary", "too_large", "not_a_file").
Invariants: a path is read only when it resolves inside the workspace (an escaping one is
`ESCAPES`: never read, never recorded) and only a regular file is opened (no FIFO, no device, no
last-moment symlink). Standard library only: this runs in a tool hook.
"""

from __future__ import annotations

import errno
import os
import stat

from ..recovery.content_rules import DEFAULT_LIMIT_BYTES, escapes, is_binary, is_secret_file

try:  # CPython's own SHA-256: hashlib's import starts OpenSSL, which costs a hook ~2 ms
    from _sha256 import sha256 as _sha256  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.12+ names it _sha2; hashlib is the same hash
    from hashlib import sha256 as _sha256

ESCAPES = "escapes"
"""`read`'s answer for a path that resolves outside the workspace."""
_CHUNK = 1 << 20


def read(workspace: str, rel: str, *, limit: int = DEFAULT_LIMIT_BYTES
         ) -> tuple[dict[str, object] | None | str, bytes | None]:
    """(what the spool keeps of `workspace/rel`, the bytes to stash when they are kept)."""
    target = os.path.realpath(os.path.join(workspace, rel))
    if escapes(rel) or os.path.commonpath([workspace, target]) != workspace or target == workspace:
        return ESCAPES, None
    secret = is_secret_file(rel) or is_secret_file(target)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # became a symlink after it was resolved
            return {"content": "not_a_file"}, None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {"content": "not_a_file"}, None
        digest, kept, size = _sha256(), [], 0
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
            size += len(chunk)
            if size <= limit and not secret:
                kept.append(chunk)
            else:
                kept.clear()
    finally:
        os.close(fd)
    found: dict[str, object] = {"hash": digest.hexdigest(), "size": size}
    data = b"".join(kept)
    if secret:
        found["content"] = "secret_file"
    elif size > limit:
        found["content"] = "too_large"
    elif is_binary(data):
        found["content"] = "binary"
    else:
        found["content"] = "stored"
        return found, data
    return found, None
