"""Framework values as payload references in records: the framework's bytes, inline or as a blob.

A payload is `["inline", type, hex]` (lowercase hex: no credential pattern can match it, so
redaction never alters it), `["blob", type, key]` for bytes above the inline limit (the blob store
fsyncs the blob before `put()` returns, so a record naming it is never durable before it), or
`["empty"]`. The bytes come from the framework's own serializer and are decoded only by it.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..errors import StoreDamaged
from ..store.blobs import BlobStore

Payload = list[str]
EMPTY: Payload = ["empty"]
INLINE_LIMIT = 16 * 1024
"""Serialized values up to this size are stored in the record; larger ones in the blob store."""


class Serializer(Protocol):
    """The typed half of LangGraph's SerializerProtocol."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]: ...

    def loads_typed(self, data: tuple[str, bytes]) -> Any: ...


class Payloads:
    """Encodes values to payloads and back with one serializer and one blob store."""

    def __init__(self, serde: Serializer, blobs: BlobStore, *,
                 inline_limit: int = INLINE_LIMIT) -> None:
        self.serde = serde
        self.blobs = blobs
        self.inline_limit = inline_limit

    def encode(self, value: Any, *, base: Payload | None = None) -> Payload:
        """The payload of a value; a large one goes to the blob store (as a delta of `base`'s)."""
        kind, data = self.serde.dumps_typed(value)
        if len(data) <= self.inline_limit:
            return ["inline", kind, data.hex()]
        base_key = base[2] if base is not None and base[0] == "blob" else None
        return ["blob", kind, self.blobs.put(data, base=base_key)]

    def decode(self, payload: Payload) -> Any:
        """The value of a payload (BlobMissing / BlobCorrupt when its blob cannot be read)."""
        tag = payload[0] if payload else None
        if tag == "inline":
            return self.serde.loads_typed((payload[1], bytes.fromhex(payload[2])))
        if tag == "blob":
            return self.serde.loads_typed((payload[1], self.blobs.get(payload[2])))
        raise StoreDamaged(f"no stored value ({payload!r}): the log holds no record of it")


def is_empty(payload: Payload) -> bool:
    """True for the payload of a channel without a value."""
    return bool(payload) and payload[0] == "empty"
