"""The JSON-RPC boundary: typed params in, results out, our errors as JSON-RPC errors.

`structure` turns raw JSON into a protocol dataclass strictly (no coercion: "5" is not an int),
with unknown keys ignored; `rpc` registers a handler for a method with its params class; `wrap`
translates every error at this one place: our typed errors keep their codes (errors.py), a bad
shape is -32602, anything else is an internal error (-32603) and the server carries on.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import re
import types
import typing
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import cattrs
from pygls.exceptions import JsonRpcException

from .. import ids
from ..errors import SessionKeeperError

log = logging.getLogger("sessionkeeper.lsp")

INVALID_PARAMS = -32602
P = TypeVar("P")
R = TypeVar("R")
S = TypeVar("S")  # the server a handler runs on: this boundary needs nothing of it


class RpcError(JsonRpcException):
    """A JSON-RPC error answer with one of our codes (see PROTOCOL.md, errors.py)."""


class InvalidParams(SessionKeeperError, ValueError):
    """A request's params have the wrong shape."""

    rpc_code = INVALID_PARAMS
    name = "invalid_params"


def _strict(kind: type) -> Callable[[Any, Any], Any]:
    def hook(value: Any, _: Any) -> Any:
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise TypeError(f"expected {kind.__name__}, not {type(value).__name__}")
        return value

    return hook


def _number(value: Any, _: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, not {type(value).__name__}")
    return float(value)


def _converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=False, detailed_validation=True)
    for kind in (str, int, bool):
        conv.register_structure_hook(kind, _strict(kind))
    conv.register_structure_hook(float, _number)

    def lists(kind: Any) -> Callable[[Any, Any], list[Any]]:
        (item,) = typing.get_args(kind) or (Any,)

        def structure_list(value: Any, _: Any) -> list[Any]:
            if not isinstance(value, list):
                raise TypeError(f"expected a list, not {type(value).__name__}")
            return [conv.structure(v, item) for v in value]

        return structure_list

    conv.register_structure_hook_factory(_is_list, lists)
    conv.register_structure_hook_func(_primitive_union, _one_of)
    conv.register_structure_hook(ids.ThreadId, lambda v, _: ids.thread_id(v))
    conv.register_structure_hook(ids.SessionId, lambda v, _: ids.session_id(v))
    return conv


_PRIMITIVES = (str, int, float, bool, type(None))


def _is_list(kind: Any) -> bool:
    origin: Any = typing.get_origin(kind)
    return origin is list


def _primitive_union(kind: Any) -> bool:
    args = typing.get_args(kind)
    return typing.get_origin(kind) in (typing.Union, types.UnionType) and len(args) > 2 and all(
        a in _PRIMITIVES for a in args)


def _one_of(value: Any, kind: Any) -> Any:
    allowed = typing.get_args(kind)
    if any(type(value) is a for a in allowed):
        return value
    names = " | ".join("null" if a is type(None) else a.__name__ for a in allowed)
    raise TypeError(f"expected {names}, not {type(value).__name__}")


_CONVERTER = _converter()
_WHERE = re.compile(r"^(.*) @ \$\.?(.*)$")


def _first_problem(exc: Exception) -> str:
    messages = cattrs.transform_error(exc) if isinstance(exc, cattrs.BaseValidationError) \
        else [str(exc)]
    first = messages[0] if messages else str(exc)
    match = _WHERE.match(first)
    if not match:
        return first
    what, where = match.groups()
    what = what.replace("invalid value for type, ", "").replace("unknown error ", "")
    return f"{where or 'params'}: {what}"


def structure(raw: Any, kind: type[P]) -> P:
    """Raw JSON params as `kind`; InvalidParams (-32602) or InvalidId (-32010) when they do not fit."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InvalidParams(f"params must be an object, not {type(raw).__name__}")
    try:
        return _CONVERTER.structure(raw, kind)
    except SessionKeeperError:
        raise
    except (cattrs.BaseValidationError, ValueError, TypeError) as exc:
        inner = _domain_error(exc)
        if inner is not None:
            raise inner from None
        raise InvalidParams(_first_problem(exc)) from None


def _domain_error(exc: BaseException) -> SessionKeeperError | None:
    """Our own error (e.g. InvalidId from a params check) inside a cattrs error group."""
    if isinstance(exc, SessionKeeperError):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _domain_error(inner)
        if found is not None:
            return found
    return None


class PlainJson(dict[str, Any]):
    """A result dataclass already converted to JSON data: its response is sent as it is
    (pygls' converter does not walk it a second time; see `server.raw_json_converter`)."""


def unstructure(result: Any) -> Any:
    """A result dataclass (or None, or plain data) as JSON-able data."""
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return PlainJson(_plain(result))
    return result


_ATOMS = frozenset({str, int, float, bool, type(None)})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _plain(value: Any) -> Any:
    """`dataclasses.asdict`'s answer, without its deep copy of every str and number (an atom is
    its own copy) and with each dataclass's field names looked up once."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    names = _FIELDS.get(kind)
    if names is None and dataclasses.is_dataclass(kind):
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
    if names is not None:  # an atom field is taken as it is, without a call
        held = getattr(value, "__dict__", None)
        if held is not None and len(held) == len(names) and tuple(held) == names:
            out = dict(held)  # exactly its fields, in their order: copied at once
            for name, v in held.items():
                if type(v) not in _ATOMS:
                    out[name] = _plain(v)
            return out
        return {name: v if type(v := getattr(value, name)) in _ATOMS else _plain(v)
                for name in names}
    if kind is list:
        return [v if type(v) in _ATOMS else _plain(v) for v in value]
    if kind is dict:
        return {_plain(k): v if type(v) in _ATOMS else _plain(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # the rarer ones, as asdict does
        return kind(*[_plain(v) for v in value])
    if isinstance(value, (list, tuple)):
        return kind(_plain(v) for v in value)
    if isinstance(value, dict):
        return kind((_plain(k), _plain(v)) for k, v in value.items())
    return copy.deepcopy(value)


@dataclasses.dataclass(frozen=True)
class Method(Generic[P, R]):
    """A `session/` method: its params class and its handler."""

    name: str
    params: type[P]
    handler: Callable[[Any, P], Awaitable[R]]  # (the server, the params)


METHODS: dict[str, Method[Any, Any]] = {}


def rpc(name: str, params: type[P]) -> Callable[[Callable[[S, P], Awaitable[R]]],
                                                 Callable[[S, P], Awaitable[R]]]:
    """Register a handler for `name`, with raw params structured into `params` before it runs."""

    def register(fn: Callable[[S, P], Awaitable[R]]) -> Callable[[S, P], Awaitable[R]]:
        METHODS[name] = Method(name, params, fn)
        return fn

    return register


def wrap(method: Method[Any, Any]) -> Callable[[Any, Any], Awaitable[Any]]:
    """The pygls feature for a method: structure params, call, unstructure, translate errors."""

    async def handler(ls: Any, raw: Any) -> Any:
        try:
            return unstructure(await method.handler(ls, structure(raw, method.params)))
        except SessionKeeperError as exc:
            log.info("%s: %s %s", method.name, exc.name, exc)
            raise RpcError(str(exc), code=exc.rpc_code, data=exc.to_dict()) from exc
        except JsonRpcException:
            raise
        except Exception as exc:
            log.exception("%s failed", method.name)
            raise RpcError(f"{method.name} failed: {exc!r}", code=-32603,
                           data={"error": "internal_error"}) from exc

    handler.__name__ = method.handler.__name__
    return handler
