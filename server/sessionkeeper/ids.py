"""Thread, session and operation ids: parsed and validated before they touch anything."""

from __future__ import annotations

import re
from typing import NewType

from .errors import InvalidId

ThreadId = NewType("ThreadId", str)
"""A validated thread id (a canonical lowercase UUID); at the protocol boundary, checked on entry."""
SessionId = NewType("SessionId", str)
"""A validated session id (a canonical lowercase UUID)."""

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_OPERATION = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _preview(raw: object) -> str:
    text = repr(raw)
    return text if len(text) <= 60 else text[:57] + "..."


def _checked(raw: object, pattern: re.Pattern[str], what: str, shape: str) -> str:
    if not isinstance(raw, str) or not pattern.fullmatch(raw):
        raise InvalidId(f"invalid {what} {_preview(raw)}: expected {shape}")
    return raw


def thread_id(raw: object) -> ThreadId:
    """Return `raw` if it is a canonical lowercase UUID thread id, else raise InvalidId."""
    return ThreadId(_checked(raw, _UUID, "thread id", "a lowercase UUID"))


def session_id(raw: object) -> SessionId:
    """Return `raw` if it is a canonical lowercase UUID session id, else raise InvalidId."""
    return SessionId(_checked(raw, _UUID, "session id", "a lowercase UUID"))


def operation_id(raw: object) -> str:
    """Return `raw` if it is a valid operation id ([A-Za-z0-9_-]{1,64}), else raise InvalidId."""
    return _checked(raw, _OPERATION, "operation id", "1-64 characters of [A-Za-z0-9_-]")


def new_id() -> str:
    """Return a fresh canonical UUID for a thread or a session."""
    import uuid  # with platform: a check or a listing never makes an id

    return str(uuid.uuid4())
