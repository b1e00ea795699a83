"""Index rows made without their dataclass `__init__` (`session_row_of`) are the same values."""

from __future__ import annotations

import dataclasses

import pytest

from sessionkeeper.store.index import SessionRow
from sessionkeeper.store.index.rows import session_row_of

FULL = SessionRow(session_id="s1", thread_id="t1", path="sessions/x.jsonl", archived=True,
                  forked_from={"thread_id": "t0", "session_id": "s0", "seq": 3}, size=9,
                  summary={"title": "t"}, title="t", imported=True)


def test_a_row_of_every_field_equals_the_one_its_init_makes() -> None:
    """Fixture: FULL, a row with nested values and flags set, taken apart and made again."""
    values = {f.name: getattr(FULL, f.name) for f in dataclasses.fields(SessionRow)}
    made = session_row_of(values)
    assert made == FULL and repr(made) == repr(FULL)
    assert list(vars(made)) == list(values)
    assert dataclasses.replace(made, size=10).size == 10
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.size = 10


def test_a_row_missing_or_adding_a_field_is_refused() -> None:
    """Fixture: FULL's fields without `size`, then with an unknown `colour`."""
    values = {f.name: getattr(FULL, f.name) for f in dataclasses.fields(SessionRow)}
    with pytest.raises(TypeError, match="size"):
        session_row_of({k: v for k, v in values.items() if k != "size"})
    with pytest.raises(TypeError, match="colour"):
        session_row_of({**values, "colour": "red"})
