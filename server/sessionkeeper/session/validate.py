"""Checking records that arrive from outside (API, CLI, LSP) against the `events` dataclasses.

The one module that imports pydantic for records: it is imported when the first record is
validated, never at start-up. A record is validated as the exact JSON bytes that will be
written, strictly (no coercion, no unknown fields).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter, ValidationError

from ..errors import InvalidEvent
from ..events import SCHEMA_VERSION, STRICT, own_body, plain
from ..schema import (
    Baseline,
    Compacted,
    Cost,
    Event,
    FileChange,
    GitMoved,
    GraphCheckpoint,
    GraphRemoved,
    GraphWrites,
    Lifecycle,
    Message,
    ModelChanged,
    Operation,
    PermissionsChanged,
    SessionMeta,
    Snapshot,
    Title,
    Todo,
    Transcript,
    Verifier,
)

AnyEvent = Annotated[
    Union[  # noqa: UP007 - pydantic discriminated unions read best this way
        SessionMeta, Lifecycle, Message, Operation, Todo, Verifier, FileChange,
        Cost, PermissionsChanged, ModelChanged, Compacted, Title, Baseline, GitMoved, Snapshot,
        GraphCheckpoint, GraphWrites, GraphRemoved, Transcript,
    ],
    Field(discriminator="type"),
]

_ADAPTER: TypeAdapter[Event] = TypeAdapter(AnyEvent)
_CHECK_JSON = _ADAPTER.validator.validate_json  # the core validator: no per-call wrapper


def _reason(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"][1:]) or "event"  # loc[0] is the type tag
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}"


def event_body(raw: dict[str, Any] | Event) -> bytes:
    """Validate an event and return its JSON body without `seq`/`ts` (the recorder adds those)."""
    body = own_body(raw)  # a record dataclass is made plain there
    if b"null" in body:  # orjson writes NaN and the infinities as null: look only then
        where = non_finite(plain(raw))
        if where is not None:
            raise InvalidEvent(f"{where}: NaN and infinities are not JSON numbers; a value "
                               f"written as null would not be the value recorded")
    try:
        _CHECK_JSON(body)
    except ValidationError as exc:
        raise InvalidEvent(_reason(exc)) from None
    return body


def non_finite(value: Any, where: str = "event") -> str | None:
    """Where in `value` a float is NaN or infinite (`args.w[0]`), None when nowhere."""
    if isinstance(value, float):
        return None if math.isfinite(value) else where
    if isinstance(value, dict):
        for key, item in value.items():
            found = non_finite(item, str(key) if where == "event" else f"{where}.{key}")
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for number, item in enumerate(value):
            found = non_finite(item, f"{where}[{number}]")
            if found is not None:
                return found
    return None


def validate_event(raw: dict[str, Any] | Event) -> Event:
    """Validate one event from outside into its dataclass; raise InvalidEvent with the reason."""
    if isinstance(raw, Event):
        return raw
    return _ADAPTER.validate_json(event_body(raw))


def json_schema() -> dict[str, Any]:
    """Return the JSON Schema of one rollout line, every field described."""
    STRICT["use_attribute_docstrings"] = True  # a documented adapter of its own, built once here
    try:
        schema = TypeAdapter(AnyEvent).json_schema()
    finally:
        del STRICT["use_attribute_docstrings"]
    schema["title"] = f"Session Keeper rollout record (schema_version {SCHEMA_VERSION})"
    return schema
