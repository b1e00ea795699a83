"""The clock: one formatted text per millisecond, the window it is cached for, and its readings."""

from __future__ import annotations

import time

from sessionkeeper.clock import CLOCK, utc_now_iso


def test_a_millisecond_is_formatted_as_iso_utc_with_its_window() -> None:
    """Fixture: none (a fixed reading, 2026-12-01T08:07:57.123456Z)."""
    start, end, text = CLOCK.millisecond(1796112477.123456)
    assert text == b"2026-12-01T08:07:57.123Z"
    assert start <= 1796112477.123456 < end
    assert abs((end - start) - 0.001) < 1e-6  # one millisecond, to the precision of a float


def test_readings_in_another_millisecond_get_their_own_text() -> None:
    """Fixture: none (two readings 1 ms apart, the cache holding the first)."""
    assert CLOCK.millisecond(1796112477.1235)[2] == b"2026-12-01T08:07:57.123Z"
    assert CLOCK.millisecond(1796112477.1245)[2] == b"2026-12-01T08:07:57.124Z"
    assert CLOCK.millisecond(1796112476.9995)[2] == b"2026-12-01T08:07:56.999Z"


def test_now_lies_between_the_wall_clock_readings_around_it() -> None:
    """Fixture: none (the real wall clock, compared at millisecond precision)."""
    for _ in range(1000):
        before = CLOCK.millisecond(time.time())[2]
        now = CLOCK.now()
        after = CLOCK.millisecond(time.time())[2]
        assert before <= now <= after
    assert utc_now_iso().endswith("Z") and len(utc_now_iso()) == 24


def test_every_reading_gets_its_own_seconds_text_whatever_second_came_before() -> None:
    """Fixture: none (readings within one second, across second, minute, day and year ends, back
    and forth, each compared with the text datetime formats for it)."""
    import datetime
    import random

    rng = random.Random(13)
    edges = [1798761599.9995, 1798761600.0005, 1796112477.9999, 1796112478.0001, 1796112477.5]
    readings = edges + [rng.uniform(0, 4e9) for _ in range(500)]
    readings += [1796112477.0 + i / 7 for i in range(30)]  # several readings in each second
    for t in readings + readings[::-1]:
        ms = int(t * 1000)
        expected = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"
        start, end, text = CLOCK.millisecond(t)
        assert text == expected.encode(), t
        assert start <= t < end
