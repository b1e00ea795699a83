"""What the index needs to know about one rollout, read from its first and last lines only.

A file whose meta or last record is crafted or damaged gets a reason instead of a row (or a row
from its meta alone; a meta failing only its checksum, a row marked damaged): one bad file never
stops the indexing of the others.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .codec import decode, loads_legacy, meta_problem, parse_legacy, reason, seq_problem
from .index import NATIVE, SessionRow
from .index.rows import session_row_of
from .layout import parse_rollout_name

_PROBE = 1 << 16


def _usable_last(record: dict[str, Any] | None, meta: dict[str, Any]) -> bool:
    """True for a last record whose fields the index row reads are well-typed."""
    if record is None or seq_problem(record.get("seq")) or record["seq"] < meta["seq"]:
        return False
    if not isinstance(record.get("ts"), (str, type(None))):
        return False
    if record.get("type") != "snapshot":
        return True
    state = record.get("state")
    summary = state.get("summary") if isinstance(state, dict) else None
    return isinstance(state, dict) and (summary is None or (
        isinstance(summary, dict) and isinstance(summary.get("title"), (str, type(None)))))


def _last_record(fd: int, size: int, head: bytes, meta: dict[str, Any], *,
                 legacy: bool) -> dict[str, Any] | None:
    """The last complete, valid record of the file (None if the last two candidates fail)."""
    window, data = min(size, _PROBE), head
    while len(data) < size:  # `head` did not hold the whole file: read backwards from the end
        data = os.pread(fd, window, size - window)
        if data.count(b"\n") >= 2 or window == size:
            break
        window = min(size, window * 4)
    lines = data.rsplit(b"\n", 3)
    candidates = lines[1:-1] if len(data) < size else lines[:-1]
    for line in reversed(candidates[-2:]):
        record = decode(line)
        if record is None and legacy:
            record = parse_legacy(line, meta=False)
        if _usable_last(record, meta):
            return record
    return None


def repo_key(meta: dict[str, Any]) -> str | None:
    """The repository identity used to group threads: its first root commit."""
    baseline = meta.get("baseline")
    identity = baseline.get("identity") if isinstance(baseline, dict) else None
    roots = identity.get("root_commits") if isinstance(identity, dict) else None
    return roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None


def session_row(meta: dict[str, Any], *, path: str, archived: bool, last: dict[str, Any] | None,
                size: int, inode: int | None, status: str = "ok",
                summary: dict[str, Any] | None = None) -> SessionRow:
    """The index row of a session from its meta and its last record (`path` store-relative)."""
    last = last or meta
    get, last_get = meta.get, last.get
    baseline, started = get("baseline"), get("ts")
    if isinstance(baseline, dict):
        branch, repo = baseline.get("branch"), repo_key(meta)
    else:
        branch = repo = None
    if summary is None and last_get("type") == "snapshot":
        summary = (last_get("state") or {}).get("summary")
    first_seq, last_seq = get("seq", 0), last_get("seq", 0)
    agent, machine = get("agent"), get("machine")
    if not isinstance(machine, dict):
        machine = {}
    return session_row_of({
        "session_id": meta["session_id"], "thread_id": meta["thread_id"], "path": path,
        "agent": NATIVE if not agent else str(agent), "archived": archived,
        "started_at": started, "last_activity": last_get("ts") or started,
        "resumed_from": get("resumed_from"), "forked_from": get("forked_from"),
        "source": get("source", "startup"), "cwd": get("cwd"), "repo_key": repo, "branch": branch,
        "title": (summary and summary.get("title")) or get("title"), "first_seq": first_seq,
        "last_seq": last_seq, "event_count": last_seq - first_seq, "size": size, "inode": inode,
        "status": status, "summary": summary, "imported": False,
        "machine": machine.get("host"), "os_user": machine.get("user"),
    })


def probe(path: Path | str, *, archived: bool, relpath: str) -> SessionRow | str:
    """Index row of a rollout from its first and last lines, or the reason it has none."""
    if parse_rollout_name(os.path.basename(path)) is None:
        return "not a rollout file name"
    return probe_named(path, archived=archived, relpath=relpath)


def probe_named(path: Path | str, *, archived: bool, relpath: str) -> SessionRow | str:
    """`probe` of a file whose name is a rollout's (a tree walk matched it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    try:
        info = os.fstat(fd)
        if info.st_size == 0:
            return "empty file"
        head = os.pread(fd, _PROBE, 0)
        while b"\n" not in head and len(head) < info.st_size:  # a meta line beyond the window
            more = os.pread(fd, len(head), len(head))
            if not more:
                break
            head += more
        cut = head.find(b"\n")
        first = head[:cut] if cut >= 0 else b""
        meta, legacy, status = decode(first), False, "ok"
        if meta is None:
            meta, legacy = parse_legacy(first), True
        if meta is None:
            meta, legacy, status = _damaged_meta(path, first), False, "damaged"
        if meta is None:
            return f"no session_meta ({reason(first)})"
        if meta.get("type") != "session_meta":
            return "no session_meta"
        why = meta_problem(meta)
        if why:
            return f"invalid session_meta: {why}"
        last = _last_record(fd, info.st_size, head, meta, legacy=legacy)
    finally:
        os.close(fd)
    return session_row(meta, path=relpath, archived=archived, last=last, size=info.st_size,
                       inode=info.st_ino, status=status)


def _damaged_meta(path: Path | str, line: bytes) -> dict[str, Any] | None:
    """A meta line that fails its checksum yet parses and names this file's session: its session
    stays in its thread as damaged (a resume then blocks, as with the row the index had), never
    silently dropped by a rebuild. The caller still checks it like any meta."""
    if reason(line) != "checksum mismatch":
        return None
    record = loads_legacy(line)
    name = parse_rollout_name(os.path.basename(path))
    if record is None or name is None or record.pop("crc", None) is None \
            or record.get("session_id") != name.session_id:
        return None
    return record
