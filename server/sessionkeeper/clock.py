"""The one clock of Session Keeper: UTC ISO-8601 timestamps with millisecond resolution.

Invariant: the text of a millisecond is formatted once and cached with the [start, end) of that
millisecond in one tuple, replaced as a whole (a reader never pairs one window with another's
text); a stamp is always the text of the millisecond the wall clock read falls in. The text of
its second (`YYYY-MM-DDTHH:MM:SS.`) is cached the same way, with the second it names, so a new
millisecond costs a concatenation, not a gmtime and a strftime (7 us a call here).
"""

from __future__ import annotations

import time

_time = time.time

Millisecond = tuple[float, float, bytes]
"""[start, end) of a millisecond in seconds since the epoch, and its text."""
_MILLIS = tuple(b"%03dZ" % n for n in range(1000))  # the text after a second's, per millisecond


class _Clock:
    """Formats the current time once per millisecond (records are stamped on the hot path)."""

    def __init__(self) -> None:
        self._cached: Millisecond = (0.0, 0.0, b"")
        self._second: tuple[int, bytes] = (-1, b"")  # a whole second and its text, with the dot

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
        second = self._second
        if second[0] != secs:
            text = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(secs)).encode()
            self._second = second = (secs, text)
        text = second[1] + _MILLIS[rest]
        self._cached = cached = (ms / 1000, (ms + 1) / 1000, text)
        return cached


CLOCK = _Clock()


def utc_now_iso() -> str:
    """The current UTC time as an ISO-8601 string with milliseconds and a Z."""
    return CLOCK.now().decode()
