"""Lifecycle transitions and ordered hooks with timeouts and isolation (the reset policy: `policy.py`).

Invariants: hooks run in `order` (ties keep registration order), each in a daemon thread that is
abandoned when its timeout passes; a hook sees a frozen deep copy of the context, so all it can do
is return context strings — it can never change the verdict; a hook that raises, hangs or returns
something else is recorded in `failures` and the next hook still runs.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from ..events import SOURCES

HookFn = Callable[[Mapping[str, Any]], "str | Iterable[str] | None"]


@dataclasses.dataclass(frozen=True)
class Hook:
    """A function run on the lifecycle sources it names, in `order`, within `timeout_s` seconds."""

    name: str
    sources: frozenset[str]
    order: int
    fn: HookFn
    timeout_s: float = 5.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", frozenset(self.sources))
        unknown = sorted(self.sources - set(SOURCES))
        if unknown:
            raise ValueError(f"hook {self.name!r}: unknown lifecycle sources {unknown}")
        if self.timeout_s <= 0:
            raise ValueError(f"hook {self.name!r}: timeout_s must be positive")


@dataclasses.dataclass(frozen=True)
class HookResult:
    """What one hook did: status ok / failed / timeout, its added context, the time it took."""

    hook: str
    status: str
    seconds: float
    added: tuple[str, ...] = ()
    error: str | None = None


@dataclasses.dataclass(frozen=True)
class HookRun:
    """The hooks run for one source: results in run order, failures for the report, context."""

    source: str
    results: list[HookResult]
    failures: list[dict[str, str]]  # {hook, source, error}: the report's `hook_failures`
    added_context: list[str]


def freeze(value: Any) -> Any:
    """Return a read-only deep copy: mappings -> proxies, lists -> tuples, sets -> frozensets."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(freeze(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # its data, not the object
        return freeze(dataclasses.asdict(value))
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - an uncopyable object is passed as it is
        return value


def _added(value: Any) -> tuple[str, ...]:
    """Normalise a hook's return value to context strings; raise TypeError for anything else."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    items = tuple(value) if isinstance(value, (list, tuple)) else None
    if items is None or not all(isinstance(i, str) for i in items):
        raise TypeError(f"a hook returns str, a list of str or None, not {type(value).__name__}")
    return items


def _call(hook: Hook, view: Any) -> HookResult:
    """Run one hook in a daemon thread; abandon it when the timeout passes."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = hook.fn(view)
        except BaseException as exc:  # noqa: BLE001 - a hook may raise anything
            box["error"] = exc

    started = time.monotonic()
    thread = threading.Thread(target=target, name=f"sessionkeeper-hook-{hook.name}", daemon=True)
    thread.start()
    thread.join(hook.timeout_s)
    seconds = time.monotonic() - started
    if thread.is_alive():
        return HookResult(hook.name, "timeout", seconds, error=f"timed out after {hook.timeout_s}s")
    if "error" in box:
        return HookResult(hook.name, "failed", seconds, error=repr(box["error"]))
    try:
        return HookResult(hook.name, "ok", seconds, added=_added(box.get("value")))
    except TypeError as exc:
        return HookResult(hook.name, "failed", seconds, error=str(exc))


def run_hooks(source: str, context: Mapping[str, Any], *, hooks: Iterable[Hook]) -> HookRun:
    """Run the hooks for `source` in order, each isolated; collect added context and failures."""
    view = freeze(context)
    chosen = sorted((h for h in hooks if source in h.sources), key=lambda h: h.order)
    results = [_call(hook, view) for hook in chosen]
    failures = [{"hook": r.hook, "source": source, "error": r.error or r.status}
                for r in results if r.status != "ok"]
    added = [text for r in results for text in r.added]
    return HookRun(source=source, results=results, failures=failures, added_context=added)


class HookRegistry:
    """The hooks of one process; names are unique."""

    def __init__(self) -> None:
        self._hooks: list[Hook] = []

    def add(self, hook: Hook) -> Hook:
        """Register a hook; raise ValueError if its name is taken."""
        if any(h.name == hook.name for h in self._hooks):
            raise ValueError(f"hook {hook.name!r} registered twice")
        self._hooks.append(hook)
        return hook

    def remove(self, name: str) -> None:
        """Unregister the hook called `name` (no error if absent)."""
        self._hooks = [h for h in self._hooks if h.name != name]

    def for_source(self, source: str) -> list[Hook]:
        """Return the hooks for `source` in the order they run."""
        return sorted((h for h in self._hooks if source in h.sources), key=lambda h: h.order)

    def run(self, source: str, context: Mapping[str, Any]) -> HookRun:
        """Run the hooks for `source` (see run_hooks)."""
        return run_hooks(source, context, hooks=self._hooks)
