"""JSON for a tool hook's process, without the `json` package: its import loads `re` and compiles
its patterns (~7 ms of a hook's CPU here, 70% of a bare Python start); CPython's C scanner and
encoder (`_json`, what `json` itself uses) cost nothing to load. Where `_json` is missing, `json`.

`loads` reads strict JSON only (NaN and Infinity are refused, as `payload.parse` requires); `dumps`
writes what `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes, or with
`spaced` what `json.dumps(value, ensure_ascii=False)` writes (a test holds them equal). Standard
library only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_WHITESPACE = " \t\n\r"


def _refuse(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")


def _unencodable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


class _Context:
    """What the C scanner reads of its decoder: strict JSON, plain dicts, no constants."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_refuse)
    memo: dict[str, str] = {}


try:
    import _json

    _scan: Callable[[str, int], tuple[object, int]] = _json.make_scanner(
        _Context())  # type: ignore[arg-type]  # the scanner reads these attributes only
    _encode: Callable[[object, int], list[str]] = _json.make_encoder(
        {}, _unencodable, _json.encode_basestring, None, ":", ",", False, False, False)
    _encode_spaced: Callable[[object, int], list[str]] = _json.make_encoder(
        {}, _unencodable, _json.encode_basestring, None, ": ", ", ", False, False, False)
except (ImportError, AttributeError):  # pragma: no cover - not CPython
    _json = None  # type: ignore[assignment]


def loads(raw: bytes | str) -> object:
    """The value of a JSON text; ValueError (a json.JSONDecodeError for bad JSON) when it is none."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if _json is None:  # pragma: no cover - not CPython
        import json

        return json.loads(text, parse_constant=_refuse)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration:
        import json  # only to say what is wrong, as json.loads says it

        return json.loads(text, parse_constant=_refuse)
    if text[end:].strip(_WHITESPACE):
        import json

        return json.loads(text, parse_constant=_refuse)  # raises: "Extra data"
    return value


def dumps(value: object, *, spaced: bool = False) -> str:
    """Compact JSON of a value (`spaced`: a space after each `,` and `:`), non-ASCII kept as it
    is; ValueError for NaN or Infinity."""
    if _json is None:  # pragma: no cover - not CPython
        import json

        return json.dumps(value, ensure_ascii=False, allow_nan=False,
                          separators=(", ", ": ") if spaced else (",", ":"))
    return "".join((_encode_spaced if spaced else _encode)(value, 0))
