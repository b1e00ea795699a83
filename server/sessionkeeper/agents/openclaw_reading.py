"""Incremental reading of one OpenClaw session window: its events from a checkpoint's seq.

The window's stamp (its row's `updated_at` and `transcript_updated_at`, which OpenClaw raises
strictly on every transcript change, the store's inode and the window's rewrite generation)
equal to the checkpoint's → no event is queried ("unchanged"); the same generation, no event
gone below the checkpoint's seq (as many there as it counted) →
only the newer events are folded ("appended"); anything else (a rewrite, deleted events, a
checkpoint of another version) is read whole ("full"). An event that is not a JSON object is
damage at line seq + 1 (there is no torn tail: a store commits whole events); the others go on.
"""

from __future__ import annotations

import copy
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from . import openclaw_store as store
from .base import AgentFile, AgentLogUnreadable
from .reading import _meta, summary_of
from .reads import CHECKPOINT_VERSION, Checkpoint, LineDamage, Read

if TYPE_CHECKING:
    from .agent import Agent
    from .openclaw_translator import OpenClawTranslator


def read_window(agent: Agent, file: AgentFile, checkpoint: Checkpoint | None) -> Read:
    """Read one window (see the module docstring for what is read when)."""
    db, session_id = store.split(str(file.path))
    if not session_id:
        with store.snapshot(db):  # a store listed without windows: its own error, if any
            raise AgentLogUnreadable(f"{db}: no OpenClaw session in it can be listed")
    if not store.valid_session_id(session_id):
        raise AgentLogUnreadable(f"{file.path}: session id {session_id[:80]!r} fails OpenClaw's own "
                                 "id rule (a letter or digit, then letters, digits, marks, . _ -; "
                                 "128 at most): not a session OpenClaw itself could have written")
    before = store.stats(db)
    with store.snapshot(db) as opened:
        window = store.window(opened, session_id)
        if window is None:
            raise AgentLogUnreadable(f"{file.path}: no such OpenClaw session (gone)")
        stamp = opened.stamp(window.transcript_at, window.updated_at, window.generation)
        if checkpoint is not None and _same(checkpoint, file, stamp):
            return Read(file, "unchanged", "unchanged", checkpoint)
        mode, reason = _plan(opened, window, stamp, checkpoint)
        state = copy.deepcopy(checkpoint.state) if mode == "appended" and checkpoint else None
        translator: OpenClawTranslator = agent.translator(file, state)  # type: ignore[assignment]
        start = checkpoint.offset if mode == "appended" and checkpoint else 0
        damage = _fold(translator, opened, window, start)
        translator.state["window"] = window.info()
        translator.state["app_version"] = opened.app_version
        translator.finish()
    if not store.unchanged_since(db, before):  # written meanwhile: no later stamp will match
        stamp = stamp._replace(st_mtime_ns=-1)
    summary = summary_of(file, translator, tail=None)
    lines = translator.state["lines"]
    cp = Checkpoint(agent=file.agent, path=str(file.path), size=stamp.st_size,
                    mtime_ns=stamp.st_mtime_ns, inode=stamp.st_ino, offset=_next(window),
                    lines=lines, head_len=0, head_sha256="", anchor_sha256="",
                    state=translator.state, summary=summary)
    all_damage = tuple(LineDamage(*d) for d in translator.state["damage"]) if mode == "full" \
        else damage
    return Read(file, mode, reason, cp, records=translator.records,
                meta_factory=partial(_meta, agent, file, translator.state), damage=all_damage,
                lines_parsed=lines - (checkpoint.lines if mode == "appended" and checkpoint else 0),
                bytes_read=0)


def _same(cp: Checkpoint, file: AgentFile, stamp: store.Stamp) -> bool:
    return (cp.size, cp.mtime_ns, cp.inode) == tuple(stamp) and cp.version == CHECKPOINT_VERSION \
        and cp.agent == file.agent and cp.path == str(file.path)


def _plan(opened: store.Store, window: store.Window, stamp: store.Stamp,
          cp: Checkpoint | None) -> tuple[str, str]:
    if cp is None:
        return "full", "new"
    if cp.version != CHECKPOINT_VERSION:
        return "full", "checkpoint of another version"
    if cp.inode != stamp.st_ino:
        return "full", "rewritten"
    if _next(window) < cp.offset or store.count_before(opened, window.session_id,
                                                       cp.offset) != cp.lines:
        return "full", "rewritten"
    return "appended", "grown"


def _next(window: store.Window) -> int:
    """The seq after the window's newest event (0 for a window without events)."""
    return 0 if window.last_seq is None else window.last_seq + 1


def _fold(translator: OpenClawTranslator, opened: store.Store, window: store.Window,
          start: int) -> tuple[LineDamage, ...]:
    """Feed the window's events from seq `start`; return the damage found on the way."""
    damage: list[LineDamage] = []
    lines = translator.state["lines"]
    loads, feed, unpacked = orjson.loads, translator.feed, store.unpacked
    for seq, text, packed, size in store.events(opened, window.session_id, start):
        lines += 1
        obj: Any = None
        why = ""
        if text is None:
            text, why = unpacked(packed, size)
        if text is not None:
            try:
                obj = loads(text)
            except orjson.JSONDecodeError as exc:
                why = f"unparsable JSON: {str(exc)[:160]}"
        if obj.__class__ is dict:
            try:
                feed(seq + 1, obj)
            except Exception as exc:  # noqa: BLE001 - one odd event never stops the window
                translator.unmappable(seq + 1, str(obj.get("type")), exc)
            continue
        found = LineDamage(seq + 1, "unparsable", why or f"a JSON {type(obj).__name__}, not an object")
        translator.damaged(found)
        damage.append(found)
    translator.state["lines"] = lines
    return tuple(damage)
