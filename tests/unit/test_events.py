"""Every record type has exactly one rule, one schema class, and the validator knows them all."""

from __future__ import annotations

import typing

import pytest

from sessionkeeper.events import KEEPER_TYPES, RECORD_TYPES, RULES, describe
from sessionkeeper.schema import RECORD_CLASSES, type_of
from sessionkeeper.session import validate


def test_every_schema_class_has_exactly_one_rule_and_every_rule_a_class() -> None:
    """Fixture: the schema's record classes and the rules table."""
    tags = [type_of(cls) for cls in RECORD_CLASSES]
    assert len(tags) == len(set(tags))
    assert set(tags) == RECORD_TYPES == set(RULES)


def test_the_validator_accepts_exactly_the_schema_classes() -> None:
    """Fixture: the discriminated union the validator is built from."""
    (union, *_) = typing.get_args(validate.AnyEvent)
    assert set(typing.get_args(union)) == set(RECORD_CLASSES)


@pytest.mark.parametrize("kind", sorted(KEEPER_TYPES))
def test_keeper_types_are_refused_from_clients(kind: str, tmp_path, repo) -> None:
    """Fixture: a started session in `repo`; a record of a type only Session Keeper writes."""
    from sessionkeeper.api import Keeper
    from sessionkeeper.errors import InvalidEvent

    with Keeper(tmp_path / "store").start(repo) as session, \
            pytest.raises(InvalidEvent, match="written by Session Keeper itself"):
        session.record({"type": kind})


@pytest.mark.parametrize("event", [{"type": ["message"]}, {"type": {"a": 1}}, {"type": 3},
                                   {"role": "user", "text": "no type"}, ["message"], "message"])
def test_a_record_whose_type_is_not_a_name_is_invalid_and_nothing_is_written(
        event: object, tmp_path, repo) -> None:
    """Fixture: a started session in `repo`; a record with no type, or a type of the wrong shape."""
    from sessionkeeper.api import Keeper
    from sessionkeeper.errors import InvalidEvent

    with Keeper(tmp_path / "store").start(repo) as session:
        before = session.writer.last_seq
        with pytest.raises(InvalidEvent):
            session.record(event)  # type: ignore[arg-type]
        assert session.writer.last_seq == before


def test_timeline_lines_come_from_the_rules() -> None:
    """Fixture: one record of a timeline type and one of a type that is not shown."""
    assert describe({"type": "operation", "tool": "shell", "operation_id": "op-1",
                     "status": "committed"}) == "shell op-1 committed"
    assert describe({"type": "message", "role": "user", "text": "hi"}) is None
    assert describe({"type": "no_such_type"}) is None
