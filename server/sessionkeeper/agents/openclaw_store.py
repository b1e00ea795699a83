"""OpenClaw's per-agent SQLite store, read without writing a byte: windows, stamps and events.

OpenClaw (2026.9) keeps every session of an agent in `agents/<agentId>/agent/openclaw-agent.sqlite`
(WAL mode): `session_windows` (one row per session id, with its `session_key`), `session_nodes`
(the key's current session id, archive and labels) and `transcript_events` (one JSON event per
`(session_id, seq)`, as `event_json` text or a zstd frame in `event_zstd`). One window is one of
our agent files, named `<db>#<session_id>` (OpenClaw's id rule forbids `#`).

Invariant: nothing under the agent's root is created, written or locked. A store whose `-wal` is
empty is opened `immutable=1`; one with WAL frames (a running Gateway) `mode=ro` through SQLite's
`unix-none` VFS in exclusive locking mode, so SQLite reads the WAL into a wal-index on the heap
and never opens or creates `-shm` nor takes a lock (a plain read-only open writes read marks into
`-shm`). A snapshot is kept open while the store's and its WAL's stats stay the same (one open
per listing, not per window). Taking no lock, a read can race a checkpoint: a store that changed
while it was read gets stamps no later stat matches, so the next listing reads it again.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import sqlite3
import threading
import unicodedata
import urllib.parse
import zlib
from collections.abc import Iterator
from typing import Any, NamedTuple

from .base import AgentLogUnreadable

STORE_NAME = "openclaw-agent.sqlite"
SEP = "#"
SCHEMA_TESTED = 23
"""The agent schema version these queries were written against (OpenClaw 2026.9.6)."""
MAX_EVENT = 4 << 20
"""OpenClaw's own bound on one stored event (4 MiB, its CHECK constraint)."""
_CHECKPOINT_NAME = re.compile(r"(.+)\.checkpoint\.([0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}"
                              r"-[0-9a-f]{12})\.jsonl", re.I)

_WINDOW = """
SELECT w.session_id, w.session_key, w.reason, w.previous_session_id, w.chat_type, w.channel,
       w.model_provider, w.model, w.display_name, w.created_at,
       n.current_session_id, n.archived_at, n.label, n.display_name, g.generation,
       (SELECT e.seq FROM transcript_events e WHERE e.session_id = w.session_id
        ORDER BY e.seq DESC LIMIT 1),
       coalesce(w.transcript_updated_at, 0), w.updated_at
FROM session_windows w LEFT JOIN session_nodes n ON n.session_key = w.session_key
LEFT JOIN transcript_rewrite_watermarks g ON g.session_id = w.session_id
WHERE w.session_id = ?
"""
_LISTING = """
SELECT w.session_id, coalesce(w.transcript_updated_at, 0), w.updated_at, g.generation
FROM session_windows w LEFT JOIN transcript_rewrite_watermarks g ON g.session_id = w.session_id
"""
_EVENTS = ("SELECT seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events "
           "WHERE session_id = ? AND seq >= ? ORDER BY seq")


def valid_session_id(raw: str) -> bool:
    """OpenClaw's own rule (`validateSessionId`): NFC, a letter or digit then up to 127 letters,
    digits, marks, `.`, `_` or `-`, a file name `<id>.jsonl` of at most 255 bytes, and not a
    compaction checkpoint's name."""
    trimmed = raw.strip()
    if not trimmed or len(trimmed) > 128 or trimmed != unicodedata.normalize("NFC", trimmed):
        return False
    if unicodedata.category(trimmed[0])[0] not in "LN":
        return False
    if any(c not in "._-" and unicodedata.category(c)[0] not in "LNM" for c in trimmed[1:]):
        return False
    return (len(f"{trimmed}.jsonl".encode()) <= 255
            and not _CHECKPOINT_NAME.fullmatch(f"{trimmed}.jsonl"))


class Window(NamedTuple):
    """One session window of the store as the listing query sees it."""

    session_id: str
    session_key: str
    reason: str | None
    previous_session_id: str | None
    chat_type: str | None
    channel: str | None
    model_provider: str | None
    model: str | None
    display_name: str | None
    created_at: int | None
    current_session_id: str | None  # the key's session now (another one after a reset)
    archived_at: int | None
    label: str | None
    node_display_name: str | None
    generation: str | None
    last_seq: int | None  # the newest event's seq (None: no event yet)
    transcript_at: int  # transcript_updated_at, ms: OpenClaw raises it strictly on each change
    updated_at: int  # the row's last mutation, ms

    def info(self) -> dict[str, Any]:
        """The window as JSON-able facts for the translator (what the events do not say); its
        session key as `route` (a key named *_key reads as a secret to redaction, which would walk
        every checkpoint that holds it)."""
        return {"route": self.session_key, "reason": self.reason,
                "previous_session_id": self.previous_session_id, "chat_type": self.chat_type,
                "channel": self.channel, "model_provider": self.model_provider, "model": self.model,
                "title": self.label or self.node_display_name or self.display_name,
                "current_session_id": self.current_session_id,
                "archived": self.archived_at is not None, "created_at": self.created_at}


class Stamp(NamedTuple):
    """A window's stat as `discovery.changes` compares it (the st_* names of os.stat_result):
    from its `session_windows` row alone, so a listing reads no event."""

    st_size: int  # updated_at (ms)
    st_mtime_ns: int  # transcript_updated_at (ms) in ns
    st_ino: int  # the store's inode and the window's rewrite generation


class Store(NamedTuple):
    """An open snapshot of one store."""

    db: sqlite3.Connection
    path: str
    inode: int
    agent_id: str | None
    schema_version: int | None
    app_version: str | None

    def stamp(self, transcript_at: int, updated_at: int, generation: str | None) -> Stamp:
        """The stamp of a window in this snapshot."""
        ino = zlib.crc32(f"{self.inode}:{generation or ''}".encode()) or 1
        return Stamp(updated_at, transcript_at * 1_000_000, ino)


def window_path(db: str, session_id: str) -> str:
    """The path of a window: `<db>#<session_id>`, the id percent-encoded (a valid one is unchanged
    but for non-ASCII letters; an invalid one may hold `/`)."""
    return f"{db}{SEP}{urllib.parse.quote(session_id, safe='')}"


def split(path: str) -> tuple[str, str]:
    """(store path, session id) of a window's path `<db>#<session_id>`."""
    db, _, session = path.rpartition(SEP)
    return db, urllib.parse.unquote(session)


def _stats(path: str) -> tuple[tuple[int, int, int], tuple[int, int]]:
    st = os.stat(path)
    try:
        wal = os.stat(path + "-wal")
        wal_stat = (wal.st_size, wal.st_mtime_ns)
    except FileNotFoundError:
        wal_stat = (0, 0)
    return (st.st_size, st.st_mtime_ns, st.st_ino), wal_stat


_LOCK = threading.RLock()
_OPEN: dict[str, tuple[tuple[tuple[int, int, int], tuple[int, int]], Store]] = {}
"""The last snapshot of each store, reused while the store and its WAL keep their stats (one
open per store and listing, not one per window); closed when the store changes, and at exit."""


@contextlib.contextmanager
def snapshot(path: str) -> Iterator[Store]:
    """The store at `path`, open read-only (see the module docstring); AgentLogUnreadable when
    it cannot be opened or is not an OpenClaw agent store."""
    with _LOCK:
        try:
            stats = _stats(path)
            os.close(os.open(path, os.O_RDONLY | os.O_CLOEXEC))  # EACCES here, not "unable to open"
        except OSError as exc:
            _forget(path)
            raise AgentLogUnreadable(f"{path}: {exc.strerror or exc}") from None
        kept = _OPEN.get(path)
        if kept is not None and kept[0] == stats:
            store = kept[1]
        else:
            _forget(path)
            store = _open(path, stats)
            _OPEN[path] = (stats, store)
        try:
            yield store
        except sqlite3.DatabaseError as exc:
            _forget(path)
            raise AgentLogUnreadable(f"{path}: unreadable OpenClaw store "
                                     f"(schema {SCHEMA_TESTED} expected): {exc}") from None


def _open(path: str, stats: tuple[tuple[int, int, int], tuple[int, int]]) -> Store:
    quoted = urllib.parse.quote(path)
    # no WAL frames: the database file is all there is. WAL frames: SQLite reads the WAL into a
    # wal-index on the heap (exclusive locking mode) through the VFS that takes no lock
    uri = f"file:{quoted}?mode=ro&vfs=unix-none" if stats[1][0] else f"file:{quoted}?immutable=1"
    db = None
    try:
        db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA locking_mode = EXCLUSIVE")  # before the first read: no -shm is used
        db.execute("PRAGMA query_only = 1")
        return Store(db, path, stats[0][2], *_schema(db, path))
    except (sqlite3.Error, AgentLogUnreadable) as exc:
        if db is not None:
            db.close()
        if isinstance(exc, AgentLogUnreadable):
            raise
        raise AgentLogUnreadable(f"{path}: cannot open the OpenClaw store: {exc}") from None


def _forget(path: str) -> None:
    kept = _OPEN.pop(path, None)
    if kept is not None:
        kept[1].db.close()


@atexit.register
def close_all() -> None:
    """Close every kept snapshot."""
    with _LOCK:
        for path in list(_OPEN):
            _forget(path)


def _schema(db: sqlite3.Connection, path: str) -> tuple[str | None, int | None, str | None]:
    try:
        row = db.execute("SELECT agent_id, schema_version, app_version FROM schema_meta "
                         "WHERE meta_key = 'primary'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise AgentLogUnreadable(f"{path}: not an OpenClaw agent store ({exc})") from None
    return (row[0], row[1], row[2]) if row else (None, None, None)


def unchanged_since(path: str, before: tuple[tuple[int, int, int], tuple[int, int]]) -> bool:
    """True when the store and its WAL have the stats taken before a read."""
    try:
        return _stats(path) == before
    except OSError:
        return False


def stats(path: str) -> tuple[tuple[int, int, int], tuple[int, int]]:
    """The store's and its WAL's stats (taken before a read, compared after it)."""
    return _stats(path)


def listing(store: Store) -> list[tuple[str, Stamp]]:
    """(session id, stamp) of every window, from the windows table alone."""
    stamp = store.stamp
    return [(sid, stamp(at or 0, updated or 0, gen))
            for sid, at, updated, gen in store.db.execute(_LISTING)]


def window(store: Store, session_id: str) -> Window | None:
    """One window with its facts and newest seq (None: there is no such window)."""
    row = store.db.execute(_WINDOW, (session_id,)).fetchone()
    return Window(*row) if row is not None else None


def count_before(store: Store, session_id: str, seq: int) -> int:
    """How many events of a window have a seq below `seq` (a checkpoint's line count)."""
    row = store.db.execute("SELECT count(*) FROM transcript_events WHERE session_id = ? AND seq < ?",
                           (session_id, seq)).fetchone()
    return int(row[0])


def events(store: Store, session_id: str, start: int) -> sqlite3.Cursor:
    """The rows (seq, event_json, event_zstd, event_utf8_bytes) of a window's events from
    `start`, in seq order (`unpacked` makes the text of a compressed one)."""
    return store.db.execute(_EVENTS, (session_id, start))


def unpacked(packed: object, size: object) -> tuple[bytes | None, str]:
    """The text of a compressed event (None and why when its frame or size is wrong)."""
    if not isinstance(packed, bytes) or not isinstance(size, int) or not 0 < size <= MAX_EVENT:
        return None, "compressed event without a valid size"
    import zstandard  # only compressed events need it

    try:
        data = zstandard.ZstdDecompressor().decompress(packed, max_output_size=size)
    except zstandard.ZstdError as exc:
        return None, f"compressed event does not decompress: {exc}"
    if len(data) != size:
        return None, f"compressed event of {len(data)} bytes, {size} recorded"
    return data, ""
