"""`jsontext` (a tool hook's JSON without the json package) reads and writes what `json` does."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionkeeper import jsontext

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@given(VALUES)
def test_a_value_is_written_as_json_writes_it_and_read_back(value: object) -> None:
    """No fixture: hypothesis values (strings of every code point but lone surrogates too)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert jsontext.dumps(value) == text
    assert jsontext.dumps(value, spaced=True) == json.dumps(value, ensure_ascii=False)
    assert jsontext.loads(text) == json.loads(text)
    assert jsontext.loads(f" \n{text}\t ") == json.loads(text)


@pytest.mark.parametrize("raw", [b"", b" ", b"{", b'{"a":1} x', b"[1,]", b"NaN", b"-Infinity",
                                 b'{"a": NaN}', b"\xff{}"])
def test_what_is_not_strict_json_is_refused(raw: bytes) -> None:
    """No fixture: empty, cut, trailing data, a trailing comma, the constants, bad UTF-8."""
    with pytest.raises(ValueError):
        jsontext.loads(raw)


def test_nan_is_never_written() -> None:
    """No fixture."""
    with pytest.raises(ValueError):
        jsontext.dumps({"x": float("nan")})
