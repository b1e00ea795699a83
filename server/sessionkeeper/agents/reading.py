"""Incremental, tolerant reading of one agent file into records, a summary and a checkpoint.

Decision per read: the same size, mtime and inode (and companions) as the checkpoint → nothing
is parsed ("unchanged"); a grown file whose first 4 KiB and the 4 KiB before the checkpoint's
offset still have the recorded sha256 → only the bytes after the offset are parsed ("appended");
anything else — another inode, a shorter file, changed bytes, a `.zst` file, a checkpoint of
another version, a translator that cannot continue (a Claude rewind) — is read whole ("full").
Lines: a torn last line (no newline, or a complete line that does not parse) is the `tail` and
stays outside the checkpoint, so the next read picks it up once it is complete; a bad line that
is followed by another one is damage with its line number; an over-long line is damage too.
"""

from __future__ import annotations

import copy
import gc
import os
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from .base import AgentFile, AgentLogUnreadable
from .discovery import companion_stats
from .lines import (
    HEAD_BYTES,
    FileStat,
    Line,
    digest_range,
    fd_reader,
    iter_lines,
    open_ro,
    stat_of,
    zst_reader,
)
from .reads import CHECKPOINT_VERSION, Checkpoint, LineDamage, LineTail, Read, SessionSummary

if TYPE_CHECKING:
    from .translate import Translator


class Translating(Protocol):
    """What reading needs of an agent (`Agent`): a translator for one of its files."""

    def translator(self, file: AgentFile, state: dict[str, Any] | None) -> Translator:
        """A translator for `file`, fresh (state None) or continuing from a checkpoint's state."""


def _companions(file: AgentFile) -> tuple[tuple[str, int, int], ...]:
    return companion_stats([str(p) for p in file.companions])


def _unchanged(file: AgentFile, st: FileStat, cp: Checkpoint,
               companions: tuple[tuple[str, int, int], ...]) -> bool:
    """True when the stat (and the companions' stats) say the checkpoint still describes the file."""
    return (st.size == cp.size and st.mtime_ns == cp.mtime_ns and st.inode == cp.inode
            and companions == cp.companions and cp.version == CHECKPOINT_VERSION
            and cp.agent == file.agent and cp.path == str(file.path))


def _plan(fd: int, file: AgentFile, st: FileStat, cp: Checkpoint | None,
          companions: tuple[tuple[str, int, int], ...]) -> tuple[str, str]:
    """("full" | "appended", reason) for a file that is not unchanged."""
    if cp is None:
        return "full", "new"
    if cp.version != CHECKPOINT_VERSION or cp.agent != file.agent or cp.path != str(file.path):
        return "full", "checkpoint of another file or version"
    if companions != cp.companions:
        return "full", "companion file changed"
    if st.inode != cp.inode:
        return "full", "replaced"
    if file.compressed:
        return "full", "compressed file changed"
    if st.size < cp.offset:
        return "full", "truncated"
    if digest_range(fd, 0, cp.head_len) != cp.head_sha256:
        return "full", "rewritten"
    anchor = min(HEAD_BYTES, cp.offset)
    if digest_range(fd, cp.offset - anchor, anchor) != cp.anchor_sha256:
        return "full", "rewritten"
    return "appended", "grown"


def _why(data: bytes | None, length: int, obj: object, max_line: int) -> tuple[str, str]:
    """(kind, detail) of a line that is not a JSON object; kind "blank" for an empty line."""
    if data is None:
        return "oversize", f"line of {length} bytes is longer than the {max_line}-byte limit"
    if not data.strip():
        return "blank", ""
    if not data.strip(b"\x00"):
        return "unparsable", "NUL bytes"
    if obj is not None:
        return "unparsable", f"a JSON {type(obj).__name__}, not an object"
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return "unparsable", f"unparsable JSON: {str(exc)[:160]}"
    return "unparsable", "not a JSON object"


class _Pass:
    """One pass over a file from an offset: feeds the translator, tracks the consumed prefix."""

    def __init__(self, translator: Translator, *, offset: int, lines: int, max_line: int) -> None:
        self.translator = translator
        self.start = offset
        self.offset, self.lines, self.max_line = offset, lines, max_line
        self.tail: LineTail | None = None
        self.parsed = 0
        self.end = offset  # bytes seen, torn tail included
        self.damage: list[LineDamage] = []

    def run(self, read: Any) -> None:
        """Feed every complete line from the offset; hold a bad line until it is known not to be last."""
        held: tuple[LineDamage, Line] | None = None  # a bad line not yet known to be in the middle
        translator, loads, max_line = self.translator, orjson.loads, self.max_line
        feed = translator.feed
        first = number = self.lines
        end = self.offset
        for line in iter_lines(read, start=self.offset, max_line=max_line):
            offset, data, length, complete = line
            end = offset + length + 1
            if not complete:
                end -= 1
                if held is not None:  # a bad line before a torn one is in the middle
                    self._flush(held)
                    held = None
                reason = "NUL bytes" if data is not None and not data.strip(b"\x00") else "torn: no newline"
                self.tail = LineTail(number + 1, offset, length, reason)
                break
            number += 1
            if held is not None:
                self._flush(held)
                held = None
            obj: Any = None
            if data is not None:
                try:
                    obj = loads(data)
                except orjson.JSONDecodeError:
                    obj = None
            if obj.__class__ is dict:
                try:
                    feed(number, obj)
                except Exception as exc:  # noqa: BLE001 - one odd line never stops the file
                    translator.unmappable(number, str(obj.get("type")), exc)
                if translator.restart:
                    self.parsed = number - first
                    return
            else:
                kind, detail = _why(data, length, obj, max_line)
                if kind != "blank":
                    held = (LineDamage(number, kind, detail), line)
                    continue
            self.offset, self.lines = end, number
        self.end, self.parsed = end, number - first
        if held is not None:  # the last complete line is unusable: a tail, not middle damage
            damage, (offset, _, length, _) = held
            self.tail = LineTail(damage.line, offset, length + 1, damage.detail)
        translator.state["lines"] = self.lines

    def _flush(self, held: tuple[LineDamage, Line]) -> None:
        """A held bad line turned out to be in the middle: damage, and consumed."""
        damage, (offset, _, length, _) = held
        self.translator.damaged(damage)
        self.damage.append(damage)
        self.offset, self.lines = offset + length + 1, damage.line


def read_file(agent: Translating, file: AgentFile, checkpoint: Checkpoint | None, *, max_line: int) -> Read:
    """Read one agent file (see the module docstring for what is parsed when)."""
    try:
        st = stat_of(file.path)
    except OSError as exc:
        raise AgentLogUnreadable(f"{file.path}: {exc.strerror or exc}") from None
    companions = _companions(file) if file.companions else ()
    if checkpoint is not None and _unchanged(file, st, checkpoint, companions):
        return Read(file, "unchanged", "unchanged", checkpoint)  # a stat, and nothing more
    try:
        fd = open_ro(file.path)
    except OSError as exc:
        raise AgentLogUnreadable(f"{file.path}: {exc.strerror or exc}") from None
    try:
        mode, reason = _plan(fd, file, st, checkpoint, companions)
        if mode == "appended" and checkpoint is not None:
            state = copy.deepcopy(checkpoint.state)
            done = _pass(agent, file, fd, state, offset=checkpoint.offset, lines=checkpoint.lines,
                         max_line=max_line)
            if not done.translator.restart:
                return _result(agent, file, fd, st, companions, done, mode="appended", reason=reason)
            reason = "rewind"
        done = _pass(agent, file, fd, None, offset=0, lines=0, max_line=max_line)
        return _result(agent, file, fd, st, companions, done, mode="full", reason=reason)
    except OSError as exc:  # an I/O error, a damaged zstd stream (lines.zst_reader)
        raise AgentLogUnreadable(f"{file.path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _pass(agent: Translating, file: AgentFile, fd: int, state: dict[str, Any] | None, *, offset: int,
          lines: int, max_line: int) -> _Pass:
    gc_was_enabled = gc.isenabled()
    gc.disable()  # thousands of kept dicts would trigger needless cyclic collections
    try:
        return _pass_gc_off(agent, file, fd, state, offset=offset, lines=lines, max_line=max_line)
    finally:
        if gc_was_enabled:
            gc.enable()


def _pass_gc_off(agent: Translating, file: AgentFile, fd: int, state: dict[str, Any] | None, *, offset: int,
                 lines: int, max_line: int) -> _Pass:
    translator = agent.translator(file, state)
    done = _Pass(translator, offset=offset, lines=lines, max_line=max_line)
    if file.compressed:
        read, stream = zst_reader(fd)
        try:
            done.run(read)
        finally:
            stream.close()
    else:
        done.run(fd_reader(fd, offset))
    if not translator.restart:
        translator.finish()
    return done


def _result(agent: Translating, file: AgentFile, fd: int, st: FileStat,
            companions: tuple[tuple[str, int, int], ...], done: _Pass, *, mode: str, reason: str) -> Read:
    translator = done.translator
    now = os.fstat(fd)
    if file.compressed:  # offsets are in the decompressed stream: any change re-reads it whole
        size, head_len, head, anchor = now.st_size, 0, "", ""
        mtime = now.st_mtime_ns if now.st_size == st.size else -1
    else:
        # a file that grew while we read gets a size no stat will match: the next read re-checks
        size = done.end if done.end >= now.st_size else now.st_size
        mtime = now.st_mtime_ns if done.end == now.st_size else -1
        head_len = min(HEAD_BYTES, done.end)
        head = digest_range(fd, 0, head_len)
        anchor_len = min(HEAD_BYTES, done.offset)
        anchor = digest_range(fd, done.offset - anchor_len, anchor_len)
    summary = summary_of(file, translator, tail=done.tail)
    checkpoint = Checkpoint(
        agent=file.agent, path=str(file.path), size=size, mtime_ns=mtime, inode=now.st_ino,
        offset=done.offset, lines=done.lines, head_len=head_len, head_sha256=head,
        anchor_sha256=anchor, state=translator.state, summary=summary, companions=companions)
    damage = tuple(LineDamage(*d) for d in translator.state["damage"]) if mode == "full" \
        else tuple(done.damage)
    return Read(file, mode, reason, checkpoint, records=translator.records,
                meta_factory=partial(_meta, agent, file, translator.state),
                damage=damage, tail=done.tail, lines_parsed=done.parsed,
                bytes_read=done.end - done.start)


def summary_of(file: AgentFile, translator: Translator, *, tail: LineTail | None) -> SessionSummary:
    """What the index keeps of a file as its translator now stands (`tail`: its torn last line)."""
    state = translator.state
    counts = state["counts"]
    fields = translator.summary_fields()
    if fields["thread_id"] is None:
        status = "empty" if state["lines"] == 0 and tail is None else "no_meta"
    else:
        status = "damaged" if state["damage_count"] else "ok"
    return SessionSummary(
        agent=file.agent, kind=file.kind, path=str(file.path), status=status,
        created_at=state["first_ts"], updated_at=state["last_ts"], archived=file.archived,
        lines=state["lines"], records=state["seq"], messages=counts["messages"],
        operations=counts["operations"], in_doubt=len(state["open_ops"]),
        input_tokens=counts["input_tokens"], output_tokens=counts["output_tokens"],
        usd=round(counts["usd"], 6), damage=state["damage_count"], torn_tail=tail is not None,
        skipped=sum(state["skipped"].values()), unrecognized=sum(state["unrecognized"].values()),
        rewound_lines=state["rewound_lines"], **fields)


def _meta(agent: Translating, file: AgentFile, state: dict[str, Any]) -> dict[str, Any] | None:
    """The session_meta a file's translator state stands for (None without a thread id)."""
    return agent.translator(file, state).meta()
