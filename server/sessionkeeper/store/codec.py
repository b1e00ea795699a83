"""One rollout line: the JSON record with a CRC32 appended as its last field, and the rules a
decoded record must meet before anything downstream reads it.

`{"seq":7,"ts":"…","type":"message",…,"crc":"1a2b3c4d"}\n` — the CRC covers every byte before
`,"crc":"`, so damage that still parses is caught without re-serializing anything.

Invariants a line must meet to be a record (the reader turns each failure into a Damage):
- the checksum is the last field, exactly 8 lower-case hex digits of the CRC32 of the bytes before
  it (any other spelling of the same number is damage: one flipped bit must always be noticed);
- `seq` is an integer (not a bool) in 0..MAX_SEQ, exact in SQLite and in a JavaScript number;
- no integer lies beyond 64 bits: Session Keeper never writes one (orjson refuses), and orjson
  would read one back as a float, so such a line is reported, never silently changed;
- a `session_meta` has every field the store relies on well-typed (`meta_problem`), a
  `snapshot` a restorable state (`snapshot_problem`): a crafted file is refused for itself only;
- a checksum-less (schema-1) line is a record only in a file whose meta says schema 1
  (`parse_legacy`): in a checksummed file a line without its checksum is damage.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from itertools import repeat
from operator import itemgetter
from struct import pack
from typing import Any

import orjson

from ..events import schema_version_of, upcast

MAX_SEQ = 2**53 - 1
_CRC_FIELD = b',"crc":"'
_SUFFIX_LEN = len(_CRC_FIELD) + 8 + 2  # ,"crc":"xxxxxxxx"}
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # what orjson reads as an int
_BIG = float(2**63)  # orjson turns an integer beyond 64 bits into a float at least this large
_loads = orjson.loads  # bound once: decode runs for every line read
_pop, _contains = dict.pop, dict.__contains__
_seq, _type = itemgetter("seq"), itemgetter("type")  # one C call a record, no repeat() argument
_core = itemgetter(slice(None, -_SUFFIX_LEN))  # a line without `,"crc":"xxxxxxxx"}`
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_META_TEXT = ("ts", "source", "model", "title")
_BASELINE_TEXT = ("repo_root", "worktree", "branch", "head", "dirty")
_PERMISSIONS = ("approval_mode", "sandbox_policy", "tool_profile")


def _first_crc32(data: bytes, value: int = 0) -> int:
    """Bind the CRC32 on first use: zlib-ng's (SIMD; the same values as zlib's, ~2.8x faster on
    a 550-byte line here), imported only when a line is first framed or checked."""
    global _crc32
    try:
        from zlib_ng import zlib_ng
    except ImportError:  # pragma: no cover - zlib-ng is a dependency; zlib gives the same CRC
        _crc32 = zlib.crc32
    else:
        _crc32 = zlib_ng.crc32
    return _crc32(data, value)


_crc32: Callable[[bytes, int], int] = _first_crc32


def crc32(data: bytes, value: int = 0) -> int:
    """The CRC32 of `data`, continuing `value` (the checksum of lines and of snapshot prefixes)."""
    return _crc32(data, value)


def crc32_function() -> Callable[[bytes, int], int]:
    """The CRC32 function itself, bound on first use (for a caller that checksums in a loop)."""
    if _crc32 is _first_crc32:
        _first_crc32(b"")
    return _crc32


def crc32_combine_function() -> Callable[[int, int, int], int] | None:
    """zlib-ng's crc32_combine(crc_a, crc_b, len_b) -> the CRC of a + b; None without zlib-ng."""
    try:
        from zlib_ng import zlib_ng
    except ImportError:  # pragma: no cover - zlib-ng is a dependency
        return None
    return zlib_ng.crc32_combine


def frame(seq: int, ts: bytes, body: bytes) -> bytes:
    """Build one line from an event body (`{"type":…}`) and its envelope (`ts` ASCII bytes)."""
    members = body[1:-1]  # none in an empty object: the envelope is then the whole record
    # a short format and one concatenation: fewer copies than formatting the body in
    core = (b'{"seq":%d,"ts":"%s",' % (seq, ts) + members if members
            else b'{"seq":%d,"ts":"%s"' % (seq, ts))
    return core + b',"crc":"%08x"}\n' % _crc32(core, 0)


class LineError(ValueError):
    """A line that is not a valid record; the message says why."""


def decode(line: bytes) -> dict[str, Any] | None:
    """The record of a valid line (without `crc`), or None; never raises (the reader's fast path).

    Valid: a JSON object whose `crc` member is exactly `%08x` of the CRC32 of the bytes before
    the last 18 (`,"crc":"xxxxxxxx"}`); so the checksum must be the last member, and a damaged
    key (`"crC"`) or another spelling of the number (`"1A2B…"`) never passes.
    """
    try:
        record = _loads(line)
        if record.pop("crc") != "%08x" % _crc32(line[:-18], 0):  # noqa: UP031 - the fastest spelling
            return None
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return None  # not JSON; a list, string or number; no `crc` member
    return record if record.__class__ is dict else None


def decode_run(lines: list[bytes], *, first_seq: int, plain: frozenset[str],
               walked: frozenset[str]) -> list[dict[str, Any]] | None:
    """The records of a run of lines when every one is a clean record, else None (never raises).

    Clean: it passes `decode`, its `seq` is an integer and the seqs run on from `first_seq`
    without a gap, its type is in `plain` (holds strings only) or in `walked` (may hold numbers:
    walked, as the reader walks it, for an integer beyond 64 bits), and a `data` member is
    walked too. None sends the caller to its line-by-line rules, which say what is wrong.
    The same checks as line by line, batched: each step is one C-level pass over the run.
    """
    count = len(lines)
    crc = crc32_function()
    try:
        records = list(map(_loads, lines))
        claimed = ",".join(map(_pop, records, repeat("crc", count)))
        seqs = list(map(_seq, records))  # every record is a dict here: `_pop` refused any other
        kinds = set(map(_type, records))
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None  # a line that is not an object with a crc (a string), a seq and a type
    # each claimed checksum is exactly its line's `%08x`: the computed ones, comma-separated,
    # spell the same string only if no claimed one holds a comma and each matches in place
    if (claimed != pack(">%dI" % count, *map(crc, map(_core, lines), repeat(0, count))).hex(",", 4)  # noqa: UP031
            or set(map(type, seqs)) != {int}  # not a bool, not a float
            or seqs != list(range(first_seq, first_seq + count))
            or first_seq + count - 1 > MAX_SEQ):
        return None
    if not kinds <= plain and (not kinds <= plain | walked or any(
            may_hold_big_int(r) for r in records if r["type"] not in plain)):
        return None
    if any(map(_contains, records, repeat("data", count))) and any(
            may_hold_big_int(r) for r in records if "data" in r):
        return None
    return records


def reason(line: bytes) -> str:
    """Why `decode` refused a line."""
    if not line.strip(b"\x00"):
        return "NUL bytes"
    if line[-_SUFFIX_LEN:-10] != _CRC_FIELD or line[-2:] != b'"}':
        return "no checksum field"
    digits = line[-10:-2]
    if digits != digits.lower() or not all(c in b"0123456789abcdef" for c in digits):
        return "malformed checksum"
    if b"%08x" % _crc32(line[:-_SUFFIX_LEN], 0) != digits:
        return "checksum mismatch"
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return f"unparsable JSON ({exc})"
    return "not a JSON object" if not isinstance(record, dict) else "valid"


def unframe(line: bytes) -> dict[str, Any]:
    """Check a line's CRC and return the record (without `crc`); raise LineError if damaged."""
    record = decode(line)
    if record is None:
        raise LineError(reason(line))
    return record


def loads_legacy(line: bytes) -> dict[str, Any] | None:
    """A schema-1 line (no checksum), parsed; only ever asked of a file whose meta says schema 1."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def schema_version(meta: dict[str, Any]) -> int | None:
    """The schema version a meta declares, if it is an integer (a bool is not)."""
    version = schema_version_of(meta)
    return version if isinstance(version, int) and not isinstance(version, bool) else None


def parse_legacy(line: bytes, *, meta: bool = True) -> dict[str, Any] | None:
    """A schema-1 line (no checksum) upcast to the current shape, or None.

    With `meta`, only a session_meta that says schema 1 qualifies: that is what makes a whole
    file legacy (its other lines are then read without checksums, and only then).
    """
    record = loads_legacy(line) if reason(line) == "no checksum field" else None
    if record is None:
        return None
    if meta and (record.get("type") != "session_meta" or schema_version(record) != 1):
        return None
    return upcast(record, 1)


def refusal(line: bytes, *, legacy: bool) -> str:
    """Why a line is refused, in a legacy file or in a checksummed one."""
    why = reason(line)
    if why != "no checksum field":
        return why
    return "unparsable JSON" if legacy or loads_legacy(line) is None else "record has no checksum"


def seq_problem(seq: object) -> str | None:
    """Why `seq` is not a valid position (None when it is one)."""
    if not isinstance(seq, int) or isinstance(seq, bool):
        return f"seq is not an integer ({type(seq).__name__} {seq!r:.40})"
    if not 0 <= seq <= MAX_SEQ:
        return f"seq {seq} out of range (0 .. 2^53-1)"
    return None


def may_hold_big_int(value: Any) -> bool:
    """True when a decoded value holds a float as large as an integer beyond 64 bits turns into."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = item.__class__
        if kind is float:
            if not -_BIG < item < _BIG:
                return True
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
    return False


def big_int_problem(line: bytes) -> str | None:
    """Why a line is refused for an integer beyond 64 bits (None if its large floats are floats).

    Exact: the standard library parser keeps integers exact; it runs only on the rare line that
    `may_hold_big_int` flags, so the common path pays nothing for it.
    """
    found: list[str] = []

    def exact(text: str) -> int:
        number = int(text)
        if not _INT_MIN <= number <= _INT_MAX:
            found.append(text)
        return number

    try:
        json.loads(line, parse_int=exact)
    except (ValueError, RecursionError):
        return None  # orjson read it; a disagreement here is not evidence of a big integer
    if not found:
        return None
    return f"integer {found[0][:24]}{'…' if len(found[0]) > 24 else ''} is beyond 64 bits"


def _uuid(value: object) -> bool:
    return isinstance(value, str) and _UUID.fullmatch(value) is not None


def _shape(value: object, keys: tuple[str, ...], where: str) -> str | None:
    """Why a value is not an optional object whose `keys` are optional strings."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"{where} is not an object"
    for key in keys:
        item = value.get(key)
        if item is not None and not isinstance(item, str):
            return f"{where}.{key} is not a string"
    return None


def meta_problem(meta: dict[str, Any]) -> str | None:
    """Why a session_meta cannot be used (None when every field the store relies on is well-typed)."""
    why = seq_problem(meta.get("seq"))
    if why:
        return why
    for key in ("thread_id", "session_id"):
        if not _uuid(meta.get(key)):
            return f"{key} is not a lowercase UUID ({meta.get(key)!r:.60})"
    if not isinstance(meta.get("cwd"), str):
        return "cwd is not a string"
    if meta.get("resumed_from") is not None and not _uuid(meta["resumed_from"]):
        return "resumed_from is not a lowercase UUID"
    baseline = meta.get("baseline")
    why = (_shape(meta, _META_TEXT, "session_meta")
           or _shape(baseline, _BASELINE_TEXT, "baseline")
           or _shape(meta.get("permissions"), _PERMISSIONS, "permissions")
           or _shape(meta.get("client"), ("name", "version"), "client")
           or _shape(meta.get("machine"), ("host", "user"), "machine"))
    if why:
        return why
    identity = baseline.get("identity") if isinstance(baseline, dict) else None
    why = _shape(identity, ("remote_url",), "baseline.identity")
    if why:
        return why
    roots = identity.get("root_commits") if isinstance(identity, dict) else None
    if roots is not None and not (isinstance(roots, list) and all(isinstance(r, str) for r in roots)):
        return "baseline.identity.root_commits is not a list of strings"
    return _forked_problem(meta.get("forked_from")) or (
        "data is not an object" if meta.get("data") is not None
        and not isinstance(meta["data"], dict) else None)


def _forked_problem(forked: object) -> str | None:
    if forked is None:
        return None
    if not isinstance(forked, dict) or not (_uuid(forked.get("thread_id"))
                                            and _uuid(forked.get("session_id"))):
        return "forked_from is not an object with a thread_id and a session_id"
    why = seq_problem(forked.get("seq"))
    return f"forked_from: {why}" if why else None


def snapshot_problem(record: dict[str, Any]) -> str | None:
    """Why a snapshot (restored as it is, without replay) cannot be restored."""
    state = record.get("state")
    if not isinstance(state, dict) or not isinstance(state.get("subsystems", {}), dict):
        return "snapshot state is not an object of subsystem states"
    if seq_problem(record.get("through_seq")):
        return "snapshot through_seq is not a valid seq"
    return None
