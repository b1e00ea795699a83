"""The one clock of Session Keeper: UTC ISO-8601 timestamps with millisecond resolution.

Invariant: the text of a millisecond is formatted once and cached with the [start, end) of that
millisecond in one tuple, replaced as a whole (a reader never pairs one window with another's
text); a stamp is always the text of the millisecond the wall clock read falls in.
"""

from __future__ import annotations

import time

_time = time.time

Millisecond = tuple[float, float, bytes]
"""[start, end) of a millisecond in seconds since the epoch, and its text."""


class _Clock:
    """Formats the current time once per millisecond (records are stamped on the hot path)."""

    def __init__(self) -> None:
        self._cached: Millisecond = (0.0, 0.0, b"")

    def now(self) -> bytes:
        """The current UTC time as ASCII bytes, e.g. b"2026-12-01T08:07:57.123Z"."""
        t = _time()
        start, end, text = self._cached
        if start <= t < end:  # float comparisons only: no integer division on the hot path
            return text
        return self.millisecond(t)[2]

    def millisecond(self, t: float) -> Millisecond:
        """The millisecond holding `t` (a `time.time()` reading) and its text; cached.

        A caller that stamps in a loop keeps the tuple and asks again only when its own reading
        leaves the window, saving a call per stamp (the recorder does).
        """
        cached = self._cached
        if cached[0] <= t < cached[1]:
            return cached
        ms = int(t * 1000)
        secs, rest = divmod(ms, 1000)
        text = (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{rest:03d}Z").encode()
        self._cached = cached = (ms / 1000, (ms + 1) / 1000, text)
        return cached


CLOCK = _Clock()


def utc_now_iso() -> str:
    """The current UTC time as an ISO-8601 string with milliseconds and a Z."""
    return CLOCK.now().decode()
