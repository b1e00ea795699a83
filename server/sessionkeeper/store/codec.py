"""One rollout line: the JSON record with a CRC32 appended as its last field.

`{"seq":7,"ts":"…","type":"message",…,"crc":"1a2b3c4d"}\n` — the CRC covers every byte before
`,"crc":"`, so damage that still parses is caught without re-serializing anything.
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson

_CRC_FIELD = b',"crc":"'
_SUFFIX_LEN = len(_CRC_FIELD) + 8 + 2  # ,"crc":"xxxxxxxx"}


def frame(seq: int, ts: bytes, body: bytes) -> bytes:
    """Build one line from an event body (`{"type":…}`) and its envelope (`ts` ASCII bytes)."""
    if len(body) <= 2:  # an empty object: the envelope is the whole record
        core = b'{"seq":%d,"ts":"%s"' % (seq, ts)
    else:
        core = b'{"seq":%d,"ts":"%s",%s' % (seq, ts, body[1:-1])
    return b'%s,"crc":"%08x"}\n' % (core, zlib.crc32(core))


class LineError(ValueError):
    """A line that is not a valid record; the message says why."""


def unframe(line: bytes) -> dict[str, Any]:
    """Check a line's CRC and return the record (without `crc`); raise LineError if damaged."""
    if line[-_SUFFIX_LEN:-10] != _CRC_FIELD or line[-2:] != b'"}':
        if not line.strip(b"\x00"):
            raise LineError("NUL bytes")
        raise LineError("no checksum field")
    try:
        expected = int(line[-10:-2], 16)
    except ValueError:
        raise LineError("malformed checksum") from None
    if zlib.crc32(line[:-_SUFFIX_LEN]) != expected:
        raise LineError("checksum mismatch")
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise LineError(f"unparsable JSON ({exc})") from None
    if not isinstance(record, dict):
        raise LineError("not a JSON object")
    del record["crc"]
    return record
