"""Lines of an agent log served in chunks (`agents.lines.iter_lines`): the same as a plain split."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionkeeper.agents.lines import iter_lines


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=400).map(lambda b: b.replace(b"\r", b"\n")),
       cuts=st.lists(st.integers(min_value=1, max_value=37), min_size=1, max_size=20),
       max_line=st.integers(min_value=1, max_value=60), start=st.integers(min_value=0, max_value=5))
def test_iter_lines_matches_a_plain_split_whatever_the_chunks(data: bytes, cuts: list[int], max_line: int,
                                                             start: int) -> None:
    """No fixture: random bytes served in random chunk sizes, random line limits and start offsets."""
    sizes = iter(cuts * (len(data) + 1))
    view = memoryview(data)
    position = 0

    def read(_: int) -> bytes:
        nonlocal position
        chunk = bytes(view[position:position + next(sizes)])
        position += len(chunk)
        return chunk

    got = list(iter_lines(read, start=start, max_line=max_line))
    *complete, last = data.split(b"\n")
    expected, offset = [], start
    for line in complete:
        expected.append((offset, line if len(line) <= max_line else None, len(line), True))
        offset += len(line) + 1
    if last:
        expected.append((offset, last if len(last) <= max_line else None, len(last), False))
    assert got == expected
