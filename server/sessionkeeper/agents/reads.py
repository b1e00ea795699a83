"""The values one read of an agent file yields: line damage, the torn tail, the summary, the
checkpoint, and the Read itself.

Invariants: a `Checkpoint` is JSON-able and is all an incremental re-read needs; `SessionSummary`
is what a listing shows; `Read.rollout()` is the store.reader.Rollout recovery folds. Imported
when a file is read (a listing that only stats files never creates these classes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

from ..events import SCHEMA_VERSION
from .base import AgentFile

if TYPE_CHECKING:
    from ..store.reader import Rollout

CHECKPOINT_VERSION = 1


@dataclass(frozen=True)
class LineDamage:
    """A bad line in the middle of an agent's log (store.reader.Damage in a Rollout)."""

    line: int
    kind: str  # unparsable | oversize | no_meta
    detail: str


@dataclass(frozen=True)
class LineTail:
    """The torn or unusable last line (store.reader.Tail in a Rollout)."""

    line: int
    offset: int
    length: int
    reason: str


@cache
def _names(cls: type) -> tuple[str, ...]:
    """The field names of a dataclass (dataclasses.fields walks them on every call)."""
    return tuple(f.name for f in fields(cls))


@dataclass(frozen=True)
class SessionSummary:
    """What the index keeps of one agent file: identity, place, activity and health."""

    agent: str
    kind: str
    path: str
    status: str  # ok | damaged | no_meta | empty
    thread_id: str | None = None
    session_id: str | None = None
    parent_thread_id: str | None = None
    title: str | None = None
    cwd: str | None = None
    branch: str | None = None
    head: str | None = None
    model: str | None = None
    client_version: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    archived: bool = False
    lines: int = 0
    records: int = 0
    messages: int = 0
    operations: int = 0
    in_doubt: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0
    damage: int = 0
    torn_tail: bool = False
    skipped: int = 0
    unrecognized: int = 0
    rewound_lines: int = 0

    def to_json(self) -> dict[str, Any]:
        """Return the summary as a JSON-able dict (its fields are all scalars)."""
        return {name: getattr(self, name) for name in _names(SessionSummary)}


@dataclass(frozen=True)
class Checkpoint:
    """Where a file was read up to, and the translator's state there: all a re-read needs."""

    agent: str
    path: str
    size: int
    mtime_ns: int
    inode: int
    offset: int  # end of the last complete line folded
    lines: int  # complete lines before `offset`
    head_len: int
    head_sha256: str  # of the first head_len bytes
    anchor_sha256: str  # of the (up to 4 KiB) bytes before `offset`
    state: dict[str, Any]
    summary: SessionSummary
    companions: tuple[tuple[str, int, int], ...] = ()  # (path, size, mtime_ns)
    version: int = CHECKPOINT_VERSION

    def to_json(self) -> dict[str, Any]:
        """Return the checkpoint as a JSON-able dict (what the index stores per file).

        The translator state is shared, not copied (it is JSON-able already): serialize it
        before the checkpoint is read on from.
        """
        out = {name: getattr(self, name) for name in _names(Checkpoint)}
        out["summary"] = self.summary.to_json()
        out["companions"] = [list(c) for c in self.companions]
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Checkpoint:
        """Rebuild a checkpoint from to_json(); raise ValueError when it is not one."""
        try:
            fields = dict(raw)
            fields["summary"] = SessionSummary(**fields["summary"])
            fields["companions"] = tuple(tuple(c) for c in fields.get("companions", ()))
            return cls(**fields)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a checkpoint: {exc}") from None


@dataclass(frozen=True)
class Read:
    """One read of an agent file: what changed, the records parsed, and the checkpoint after it.

    `mode` is "full" (read from the start: `records` are the whole file's), "appended" (only
    the bytes after the checkpoint were parsed: `records` are the new ones, continuing its seq)
    or "unchanged" (stat said nothing changed: nothing was parsed).
    """

    file: AgentFile
    mode: str
    reason: str  # new, grown, unchanged, replaced, truncated, rewritten, compressed, rewind, ...
    checkpoint: Checkpoint
    records: list[dict[str, Any]] = field(default_factory=list)
    damage: tuple[LineDamage, ...] = ()
    tail: LineTail | None = None
    lines_parsed: int = 0
    bytes_read: int = 0
    meta_factory: Callable[[], dict[str, Any] | None] | None = field(default=None, compare=False,
                                                                     repr=False)

    @property
    def summary(self) -> SessionSummary:
        """The whole file's summary after this read."""
        return self.checkpoint.summary

    @cached_property
    def meta(self) -> dict[str, Any] | None:
        """The synthesized session_meta (seq 0) as the file now stands; None without a thread id.

        Built on first use from the checkpoint's state (a listing never needs it).
        """
        return self.meta_factory() if self.meta_factory is not None else None

    def rollout(self) -> Rollout:
        """The file as a store.reader.Rollout in our vocabulary (only for a full read)."""
        if self.mode != "full":
            raise ValueError(f"a {self.mode} read holds no whole rollout; read without a checkpoint")
        from ..store.reader import Damage, Rollout, Status, Tail

        status = {"ok": Status.OK, "damaged": Status.DAMAGED, "no_meta": Status.NO_META,
                  "empty": Status.EMPTY}[self.summary.status]
        damage = [Damage(d.line, d.kind, d.detail) for d in self.damage]
        if self.meta is None and status is Status.NO_META:
            damage.insert(0, Damage(1, "no_meta", f"no {self.file.agent} session id found in the file"))
        t = self.tail
        tail = Tail(t.line, t.offset, t.length, t.reason) if t is not None else None
        return Rollout(path=self.file.path, status=status, meta=self.meta, records=list(self.records),
                       damage=damage, tail=tail, size=self.checkpoint.size, schema_version=SCHEMA_VERSION)
