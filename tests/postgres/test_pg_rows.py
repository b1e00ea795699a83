"""Thread rows decoded from the PostgreSQL index's plain tuples (`pg_rows.thread_row_of`) are the
very values `ThreadRow(**…)` makes (no fixture: tuples as the server returns them)."""

from __future__ import annotations

import dataclasses

import pytest

from sessionkeeper.store.index.pg_rows import thread_row_of
from sessionkeeper.store.index.pg_sql import THREAD_COLUMNS
from sessionkeeper.store.index.rows import ThreadRow
from sessionkeeper.store.index.sql import values_of


def distinct_row(**changes: object) -> ThreadRow:
    """A thread row whose every field holds its own value (so a swapped column shows)."""
    values: dict[str, object] = {}
    for n, field in enumerate(dataclasses.fields(ThreadRow)):
        if field.type.startswith("bool"):
            values[field.name] = n % 2 == 0
        elif field.type.startswith("int"):
            values[field.name] = 1000 + n
        elif field.type.startswith("dict"):
            values[field.name] = {"field": field.name, "n": [n, {"deep": None}]}
        else:
            values[field.name] = f"{field.name}-{n}"
    return ThreadRow(**{**values, **changes})  # type: ignore[arg-type]


def test_a_decoded_tuple_is_the_row_that_was_written_field_by_field() -> None:
    """A row with a distinct value in each field, as `values_of` stores it, decodes to itself."""
    for row in (distinct_row(), distinct_row(archived=True, damaged=False, imported=True),
                distinct_row(forked_from=None, summary=None, title=None, last_activity=None),
                distinct_row(summary={}, forked_from={"thread_id": "t", "at_seq": 3})):
        decoded = thread_row_of(values_of(row))
        assert decoded == row
        assert list(vars(decoded)) == list(THREAD_COLUMNS)
        assert all(type(getattr(decoded, f)) is type(getattr(row, f)) for f in THREAD_COLUMNS)


def test_a_decoded_row_stays_frozen_and_hashable_like_a_made_one() -> None:
    """A decoded row refuses assignment and replaces like any dataclass value."""
    decoded = thread_row_of(values_of(distinct_row(summary=None, forked_from=None)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        decoded.title = "other"  # type: ignore[misc]
    assert dataclasses.replace(decoded, title="other").title == "other"
    assert hash(decoded) == hash(distinct_row(summary=None, forked_from=None))
