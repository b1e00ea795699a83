"""A store's identity on the shared server: a random id kept in `<store>/store-id` (0600).

Made once, on the store's first sync; never derived from a path or a host name, so a store that is
moved or copied elsewhere keeps its partition, and two stores on one machine keep two.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

from ...errors import StoreDamaged, storage_error

FILE = "store-id"


def store_id(root: Path) -> str:
    """The store's id, made (durably, 0600) when it has none yet."""
    path = root / FILE
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreDamaged(f"{path}: cannot read the store's id: {exc}") from exc
    if text:
        _check(text, path)
        return text
    made = uuid.uuid4().hex
    tmp = root / f".{FILE}.{os.getpid()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(made + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)  # the first maker wins; another's id is then read back
    except OSError as exc:
        raise storage_error(exc, "cannot write the store's id") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return store_id(root)


def _check(text: str, path: Path) -> None:
    if len(text) != 32 or any(c not in "0123456789abcdef" for c in text):
        raise StoreDamaged(f"{path} does not hold a store id ({text[:40]!r})")
