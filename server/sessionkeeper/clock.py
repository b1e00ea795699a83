"""The one clock of Session Keeper: UTC ISO-8601 timestamps with millisecond resolution."""

from __future__ import annotations

import time


class _Clock:
    """Formats the current time once per millisecond (records are stamped on the hot path)."""

    def __init__(self) -> None:
        self._cached = (-1, b"")  # (millisecond, its text): one tuple, replaced atomically

    def now(self) -> bytes:
        """The current UTC time as ASCII bytes, e.g. b"2026-12-01T08:07:57.123Z"."""
        ms = time.time_ns() // 1_000_000
        cached_ms, text = self._cached
        if ms != cached_ms:
            secs, rest = divmod(ms, 1000)
            text = (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{rest:03d}Z").encode()
            self._cached = (ms, text)
        return text


CLOCK = _Clock()


def utc_now_iso() -> str:
    """The current UTC time as an ISO-8601 string with milliseconds and a Z."""
    return CLOCK.now().decode()
