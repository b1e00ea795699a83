"""One rollout line: the JSON record with a CRC32 of its body appended as the last field.

`{"seq":7,"ts":"…","type":"message",…,"crc":"1a2b3c4d"}\n` — the CRC covers the line with the
`,"crc":"…"` field removed, so damage that still parses is caught without re-serializing.
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson

_CRC_FIELD = b',"crc":"'
_SUFFIX_LEN = len(_CRC_FIELD) + 8 + 2  # ,"crc":"xxxxxxxx"}


def frame(seq: int, ts: str, body: bytes) -> bytes:
    """Build one line from an event body (`{"type":…}`) and its envelope."""
    head = b'{"seq":%d,"ts":"%s",' % (seq, ts.encode())
    core = head + body[1:] if len(body) > 2 else head[:-1] + b"}"
    return b"%s%s%08x\"}\n" % (core[:-1], _CRC_FIELD, zlib.crc32(core))


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
    if zlib.crc32(line[:-_SUFFIX_LEN] + b"}") != expected:
        raise LineError("checksum mismatch")
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise LineError(f"unparsable JSON ({exc})") from None
    if not isinstance(record, dict):
        raise LineError("not a JSON object")
    del record["crc"]
    return record
