"""Constraints declared with `annotated_types` on dataclass fields, checked at runtime.

The same declarations reach the JSON Schema, so a bound is written once.
"""

from __future__ import annotations

import typing
from dataclasses import fields
from functools import cache
from typing import Any

import annotated_types as at


def _metadata(hint: Any) -> list[Any]:
    """The Annotated metadata of a hint, also inside `X | None`."""
    meta = list(getattr(hint, "__metadata__", ()))
    for arg in typing.get_args(hint) if not meta else ():
        meta += getattr(arg, "__metadata__", ())
    return meta


@cache
def _bounds(cls: Any) -> list[tuple[str, list[Any]]]:
    hints = typing.get_type_hints(cls, include_extras=True)
    return [(f.name, meta) for f in fields(cls) if (meta := _metadata(hints[f.name]))]


def check(obj: Any) -> None:
    """Raise ValueError naming the field when a value breaks an `annotated_types` constraint."""
    for name, constraints in _bounds(obj.__class__):
        value = getattr(obj, name)
        if value is None:
            continue
        for c in constraints:
            if isinstance(c, at.Interval):
                bad = ((c.ge is not None and value < c.ge) or (c.le is not None and value > c.le))
                if bad:
                    raise ValueError(f"{name}: must lie in [{c.ge}, {c.le}], not {value}")
            elif isinstance(c, at.Ge) and value < c.ge:
                raise ValueError(f"{name}: must be at least {c.ge}, not {value}")
            elif isinstance(c, at.Len):
                n = len(value)
                if n < c.min_length or (c.max_length is not None and n > c.max_length):
                    raise ValueError(f"{name}: length must lie in [{c.min_length}, "
                                     f"{c.max_length}], not {n}")
