"""What a `file_change` gets filled in at record time: its content kept as a blob, and what came before.

Rules (a record's own fields always win):
- without `after_hash` (and not `deleted`) the file is read now (`content.capture`): its content
  becomes a blob — fsynced before the record is written, hence before it is acknowledged — and
  `after_hash` its sha256; binary, oversized, secret-named and escaping files keep only the
  hash, and `content` says why; a file that is gone makes the record a deletion;
- the session's first change of a file also says what the file held before: what the session
  saw (a `change: seen` record: the scan at start or resume, or the writer's), else — for a
  record read now — its content at the baseline commit (git); absent there, not seen at start
  and not git-ignored, it was created by the session (`change: create`);
- a record that carries its hashes costs no blob work and no git call (only what was seen is
  copied from the history);
- `content: stored` from a writer is believed only when the blob is there; `rewind` versions
  come from Session Keeper's own rewind only; a workspace that is not a directory here is never
  read (its files would all look deleted).

`scan` lists the files that differ from the baseline commit (modified and untracked, not ignored)
so their content before the session is kept: at start, and at resume for files the thread has
not seen as they are now.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InvalidEvent, SessionKeeperError
from ..events import Record
from ..store.blobs import BlobStore
from . import gitrun, queries
from .content import (
    Captured,
    HashOnly,
    Missing,
    Stored,
    capture,
    capture_at_commit,
    capture_content,
)
from .paths import RealPaths
from .subsystems.file_history import FileHistory

if TYPE_CHECKING:
    from ..policy import SessionPolicy
    from ..store.writer import SessionWriter
    from .state import SessionState

log = logging.getLogger("sessionkeeper.capture")


class CapturingSession(Protocol):
    """What a capture reads of the session it records for (a `session.live.Session`)."""

    @property
    def workspace(self) -> str: ...

    @property
    def writer(self) -> SessionWriter: ...

    @property
    def state(self) -> SessionState: ...

    @property
    def policy(self) -> SessionPolicy: ...

SCAN_MAX_FILES = 5000
"""At most this many files are seen by one scan (a warning names the rest)."""
SCAN_MAX_STORED = 200
"""Of those, at most this many are kept as blobs; the rest are seen by hash only."""
_GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}


@dataclass(frozen=True, kw_only=True)
class Where:
    """The workspace a session records in, and its baseline commit (None outside git)."""

    workspace: str
    commit: str | None

    @classmethod
    def of(cls, session: CapturingSession) -> Where:
        """Where a session runs (its real workspace: the recorded cwd may be redacted)."""
        baseline = session.writer.meta.get("baseline") or {}
        return cls(workspace=session.workspace, commit=baseline.get("head"))


def complete(event: Record, session: CapturingSession, *, content: bytes | Captured | None = None,
             own: bool = False) -> Record:
    """The file_change `event` (path already workspace-relative) with content and before filled in
    (`content`: the bytes given, or the file as a tool hook captured it at the time of the call)."""
    if not own and (event.get("author") == "rewind" or "rewind_seq" in event):
        raise InvalidEvent("author: 'rewind' versions are written by Session Keeper itself")
    where = Where.of(session)
    history = session.state.get(FileHistory)
    blobs, policy = session.writer.store.blobs, session.policy
    out = dict(event)
    _check_claims(out, blobs)
    path = out["path"]
    read_now = "after_hash" not in out and not out.get("deleted")
    if read_now and content is None and not os.path.isdir(where.workspace):  # never a deletion
        raise InvalidEvent(f"path: the workspace {where.workspace} is not a directory here; "
                           "give after_hash (or deleted) to record this change")
    previous = history.last(path)
    if read_now:
        out.update(_after(path, where=where, previous=previous, blobs=blobs, policy=policy,
                          content=content))
    if _before_unknown(out, previous):
        out.update(_before(path, out, where=where, history=history, blobs=blobs, policy=policy,
                           read_now=read_now))
    return with_change(out, previous)


def _before_unknown(event: Record, previous: dict[str, Any] | None) -> bool:
    """True for a session's first change of a file that does not say what came before."""
    return (previous is None and event.get("change") != "seen" and "before_hash" not in event
            and event.get("content") != "outside_workspace")  # its past is not ours to know


def with_change(event: Record, previous: dict[str, Any] | None) -> Record:
    """`event` with its `change` (create, modify, delete) when it has none and can be told."""
    if "change" not in event:
        if event.get("deleted"):
            event["change"] = "delete"
        elif previous is not None:
            event["change"] = "create" if previous.get("hash") is None else "modify"
        elif event.get("before_hash"):
            event["change"] = "modify"
    return event


def complete_known(event: Record, history: FileHistory) -> Record:
    """A file_change whose content was captured (`captured_fields`) completed from the history
    alone: what a read-only fold of a hook's spool can know without git or writing blobs."""
    out = dict(event)
    previous = history.last(out["path"])
    if _before_unknown(out, previous):
        known = history.before(out["path"])
        if known is not None:
            out.update(_known_before(known, out))
    return with_change(out, previous)


def captured_fields(got: Captured) -> Record:
    """The after fields of a file_change whose file was read at the time of the call."""
    if isinstance(got, Missing):
        return {"deleted": True}
    return _fields(got, "after_hash", "content")


def _check_claims(event: Record, blobs: BlobStore) -> None:
    for digest, claim in (("after_hash", "content"), ("before_hash", "before_content")):
        if event.get(claim) == "stored" and (not isinstance(event.get(digest), str)
                                             or event[digest] not in blobs):
            raise InvalidEvent(f"{claim}: 'stored', but no blob holds {digest} "
                               f"{str(event.get(digest))[:16]!r}")


def _after(path: str, *, where: Where, previous: dict[str, Any] | None, blobs: BlobStore,
           policy: SessionPolicy, content: bytes | Captured | None) -> Record:
    """The fields a record read now gets: after_hash and content, or deleted."""
    base = previous.get("hash") if previous and not previous.get("content") else None
    try:
        got = _read(path, where=where, base=base, blobs=blobs, policy=policy, content=content)
    except SessionKeeperError:  # StoreFull is an OSError too: it stays what it is
        raise
    except OSError as exc:
        raise InvalidEvent(f"path: cannot read {path}: {exc.strerror or exc}") from None
    return _fields(got, "after_hash", "content") if not isinstance(got, Missing) else {"deleted": True}


def _read(path: str, *, where: Where, base: str | None, blobs: BlobStore, policy: SessionPolicy,
          content: bytes | Captured | None) -> Stored | HashOnly | Missing:
    """The content given, else the file as it is now, classified and (if it may be) stored; a
    value captured at the time of a call (a tool hook's) is taken as it is, its raw blob
    compressed (a delta against `base` when that pays)."""
    if isinstance(content, Stored):
        return Stored(content.path, blobs.put(blobs.get(content.hash), base=base), content.size)
    if isinstance(content, (HashOnly, Missing)):
        return content
    if content is not None:
        return capture_content(path, content, blobs=blobs, base=base,
                               limit_bytes=policy.content_limit_bytes,
                               allow_secret_files=policy.allow_secret_files)
    return capture(where.workspace, path, blobs=blobs, base=base,
                   limit_bytes=policy.content_limit_bytes,
                   allow_secret_files=policy.allow_secret_files)


def _fields(got: Stored | HashOnly, digest: str, claim: str) -> Record:
    if isinstance(got, Stored):
        return {digest: got.hash, claim: "stored"}
    return {**({digest: got.hash} if got.hash else {}), claim: got.reason}


def _before(path: str, event: Record, *, where: Where, history: FileHistory, blobs: BlobStore,
            policy: SessionPolicy, read_now: bool) -> Record:
    """What the file held before the session's first change of it, as far as can be known."""
    known = history.before(path)
    if known is not None:
        return _known_before(known, event)
    if not read_now or where.commit is None or event.get("change") == "create":
        return {}
    try:
        got = capture_at_commit(where.workspace, path, commit=where.commit, blobs=blobs,
                                limit_bytes=policy.content_limit_bytes,
                                allow_secret_files=policy.allow_secret_files)
    except InvalidEvent:
        raise
    except Exception as exc:  # noqa: BLE001 - git missing or the commit gone: before is unknown
        log.warning("could not read %s at %s: %s", path, where.commit, exc)
        return {}
    if isinstance(got, Missing):
        return {} if event.get("change") or _ignored(where.workspace, path) else {"change": "create"}
    return _fields(got, "before_hash", "before_content")


def _known_before(known: dict[str, Any], event: Record) -> Record:
    """The before fields from what the history knows of the file before the session changed it."""
    if known.get("hash") is None:
        return {} if event.get("change") else {"change": "create"}
    out: Record = {"before_hash": known["hash"]}
    out["before_content"] = known.get("content") or "stored"
    if out["before_content"] == "not_captured":
        del out["before_content"]
    return out


def _ignored(workspace: str, path: str) -> bool:
    """True if git ignores `path` (then it may have existed unseen before the session)."""
    done = _git(workspace, "check-ignore", "-q", "--no-index", "--", path)
    return done is None or done.returncode != 1


def _git(workspace: str, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run(["git", *args], cwd=workspace, env=gitrun.environment(_GIT_ENV),
                              capture_output=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None


def differing_files(workspace: str, *, skip: str | None = None) -> Iterator[str]:
    """Workspace-relative paths git lists as modified, deleted or untracked (not ignored), but
    none whose name is not UTF-8 (a warning names it)."""
    waiting = [gitrun.started(workspace, *args, timeout_s=queries.TIMEOUT_S[args])
               for args in queries.CHANGED]  # side by side
    done = [wait() for wait in waiting]
    if not all(d.ok for d in done):
        return
    skip_real = os.path.realpath(skip) if skip else None
    paths = RealPaths(workspace)
    for raw in dict.fromkeys(b"".join(d.stdout for d in done).split(b"\0")):
        if not raw:
            continue
        try:
            rel = raw.decode("utf-8")
        except UnicodeDecodeError:  # the log is UTF-8 JSON: such a name cannot be recorded
            log.warning("%s: %r is not a UTF-8 file name; its versions are not kept",
                        workspace, raw)
            continue
        if skip_real and paths.real(rel).startswith(skip_real + os.sep):
            continue
        yield rel


def scan(session: CapturingSession) -> list[Record]:
    """`change: seen` records for the differing files whose current content the thread lacks."""
    from .baseline import PathEscapesRoot, file_hash

    where = Where.of(session)
    history = session.state.get(FileHistory)
    store_root = str(session.writer.store.layout.root)
    if where.commit is None:
        return []
    events: list[Record] = []
    paths = RealPaths(where.workspace)
    for number, rel in enumerate(differing_files(where.workspace, skip=store_root)):
        if number >= SCAN_MAX_FILES:
            log.warning("%s: more than %d files differ from the baseline; the rest are not seen",
                        where.workspace, SCAN_MAX_FILES)
            break
        if history.last(rel) is not None:
            continue
        try:
            digest = file_hash(where.workspace, rel, paths=paths)
        except (PathEscapesRoot, OSError):
            continue
        earlier = history.seen.get(rel)
        if earlier is not None and earlier.get("hash") == digest:
            continue
        event: Record = {"type": "file_change", "path": rel, "change": "seen", "author": "external"}
        if digest is None:
            event["deleted"] = True
        elif len(events) >= SCAN_MAX_STORED:
            event["after_hash"] = digest
        events.append(event)
    return events
