"""Rewind: a pure planner (what each file should become) and an executor that carries a plan out.

Planner invariants (`plan_rewind`, `plan_undo` read nothing, write nothing):
- a file whose disk content is not the last version the session knows, or that the user (or
  something external) changed after the target seq, is `refused` unless forced — a rewind
  never destroys work the session did not make without being told to;
- a version without stored content (hash only, blob missing or corrupt) is `unavailable`.

Executor invariants (`execute`):
- before touching a file it re-reads it: a file no longer as planned is `stale`, left alone;
- the content on disk is stored as a blob before it is replaced or deleted, so every rewind can
  be undone (`plan_undo`) — forced ones included;
- a blob is read and verified before its file is touched: a missing or corrupt blob fails that
  file only, and garbage is never written;
- each file is replaced by a temp file in its directory (fsync, rename, fsync of the directory):
  a `kill -9` leaves every file old or new. Deleting a path that is a symlink removes the link,
  never the file it names. Temp files a killed run left behind are removed by
  the next run that touches the file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import BlobUnavailable
from ..store.blobs import BlobStore, content_key
from ..store.layout import fsync_dir
from .subsystems.file_history import norm_path
from .versions import OURS, History, Version, normalised, state_at, versions_of

Action = Literal["restore", "delete", "unchanged", "refused", "unavailable"]
Status = Literal["written", "deleted", "unchanged", "skipped", "stale", "failed"]
TEMP_SUFFIX = ".sk-rewind"


@dataclass(frozen=True)
class FileStep:
    """What a rewind plans for one file, and why.

    `current` is the hash the plan saw on disk (None: absent); `target` the hash to restore
    (None for delete); `target_label` names the version restored (`seq 4, agent`).
    """

    path: str
    action: Action
    reason: str
    current: str | None = None
    target: str | None = None
    target_label: str | None = None
    forced: bool = False


@dataclass(frozen=True)
class RewindPlan:
    """Every file's step; `to_seq` is None for an undo."""

    to_seq: int | None
    force: bool
    steps: tuple[FileStep, ...]

    def changes(self) -> tuple[FileStep, ...]:
        """The steps that write or delete a file."""
        return tuple(s for s in self.steps if s.action in ("restore", "delete"))


@dataclass(frozen=True)
class FileOutcome:
    """What `execute` did to one file: hashes on disk before and after (None: absent)."""

    path: str
    status: Status
    reason: str
    before: str | None = None
    after: str | None = None
    error: str | None = None  # the typed error's name when `failed` (blob_missing, blob_corrupt…)


@dataclass(frozen=True)
class RewindResult:
    """Per-file outcomes of one executed plan."""

    to_seq: int | None
    outcomes: tuple[FileOutcome, ...]

    @property
    def undo(self) -> dict[str, str | None]:
        """{path: hash on disk before} for every file written or deleted (all stored as blobs)."""
        return {o.path: o.before for o in self.outcomes if o.status in ("written", "deleted")}

    def with_status(self, *statuses: Status) -> tuple[FileOutcome, ...]:
        """The outcomes with one of `statuses`."""
        return tuple(o for o in self.outcomes if o.status in statuses)


def plan_rewind(history: History, *, to_seq: int, current: Mapping[str, str | None],
                paths: Iterable[str] | None = None, force: bool = False,
                unreadable: Mapping[str, str] | None = None) -> RewindPlan:
    """Plan restoring each file (all, or `paths`) to its version at `to_seq`.

    `current`: each file's hash on disk now (None: absent); `unreadable`: blob hashes whose content
    cannot be read, with why (`BlobStore.unreadable`). A file first changed after `to_seq` goes back
    to its content before the session (deleted if the session created it).
    """
    files = normalised(history)
    wanted = sorted(files) if paths is None else sorted({norm_path(p) for p in paths})
    bad = unreadable or {}
    steps = tuple(_plan_file(p, files.get(p, []), to_seq=to_seq, current=current, force=force,
                             unreadable=bad) for p in wanted)
    return RewindPlan(to_seq, force, steps)


def _plan_file(path: str, raw: list[Mapping[str, Any]], *, to_seq: int,
               current: Mapping[str, str | None], force: bool,
               unreadable: Mapping[str, str]) -> FileStep:
    versions = versions_of(raw)
    if not versions:
        return FileStep(path, "unavailable", "the session has no history of this file")
    if path not in current:
        return FileStep(path, "refused", "its content on disk now was not given")
    now = current[path]
    target = state_at(raw, to_seq)
    if target is None:
        return FileStep(path, "unavailable", f"nothing is known of it before its first recorded "
                                             f"change (seq {versions[0].seq})", now)
    if target.hash == now:
        return FileStep(path, "unchanged", f"already holds {target.described}", now)
    missing = target.content or (unreadable.get(target.hash) if target.hash else None)
    if missing:
        return FileStep(path, "unavailable", f"{target.described} has no readable content "
                                             f"({missing})", now)
    conflict = _conflict(versions, now, to_seq)
    if conflict and not force:
        return FileStep(path, "refused", f"{conflict}; --force keeps that content as a blob", now)
    action: Action = "delete" if target.hash is None else "restore"
    what = "delete it" if target.hash is None else f"restore {target.described}"
    reason = f"{what} (forced: {conflict})" if conflict else what
    return FileStep(path, action, reason, now, target.hash, target.label, bool(conflict))


def _conflict(versions: list[Version], now: str | None, to_seq: int) -> str | None:
    """Why rewinding this file would lose work the session did not make, or None."""
    last = versions[-1]
    if now != last.hash:
        change = "deleted" if now is None else "created" if last.hash is None else "changed"
        return f"{change} on disk since the session's last version (seq {last.seq}, {last.author})"
    theirs = [v for v in versions if v.seq is not None and v.seq > to_seq and v.author not in OURS]
    if theirs:
        return f"changed by the {theirs[0].author} at seq {theirs[0].seq}, after seq {to_seq}"
    return None


def plan_undo(result: RewindResult, *, current: Mapping[str, str | None], force: bool = False,
              unreadable: Mapping[str, str] | None = None) -> RewindPlan:
    """Plan putting back what `result` replaced; a file changed since that rewind is refused unless forced."""
    bad = unreadable or {}
    steps: list[FileStep] = []
    for done in result.with_status("written", "deleted"):
        label = "its content before the rewind"
        if done.path not in current:
            steps.append(FileStep(done.path, "refused", "its content on disk now was not given"))
            continue
        now = current[done.path]
        if now == done.before:
            steps.append(FileStep(done.path, "unchanged", f"already holds {label}", now))
        elif done.before is not None and done.before in bad:
            steps.append(FileStep(done.path, "unavailable", f"{label} has no readable content "
                                                            f"({bad[done.before]})", now))
        elif now != done.after and not force:
            steps.append(FileStep(done.path, "refused", "changed on disk since the rewind; --force "
                                                        "keeps that content as a blob", now))
        else:
            action: Action = "delete" if done.before is None else "restore"
            steps.append(FileStep(done.path, action, f"put back {label}", now, done.before, label,
                                  now != done.after))
    return RewindPlan(None, force, tuple(steps))


# -- the executor --------------------------------------------------------------------------------


def execute(plan: RewindPlan, *, workspace: str | os.PathLike[str], blobs: BlobStore) -> RewindResult:
    """Carry out `plan` file by file; one file's failure never stops the others."""
    root = os.path.realpath(workspace)
    outcomes: list[FileOutcome] = []
    for step in plan.steps:
        if step.action == "unchanged":
            outcomes.append(FileOutcome(step.path, "unchanged", step.reason, step.current, step.current))
        elif step.action in ("refused", "unavailable"):
            outcomes.append(FileOutcome(step.path, "skipped", f"{step.action}: {step.reason}",
                                        step.current, step.current))
        else:
            outcomes.append(_carry_out(step, root, blobs))
    return RewindResult(plan.to_seq, tuple(outcomes))


def _carry_out(step: FileStep, root: str, blobs: BlobStore) -> FileOutcome:
    """Restore or delete one file, guarded as the module docstring says."""
    target = Path(os.path.realpath(os.path.join(root, step.path)))
    head, name = os.path.split(step.path)
    entry = Path(os.path.realpath(os.path.join(root, head)), name)  # the name itself: maybe a link
    if any(os.path.commonpath([root, p]) != root or str(p) == root for p in (target, entry)):
        return FileOutcome(step.path, "failed", "the path resolves outside the workspace",
                           step.current, step.current, "outside_workspace")
    try:
        _sweep(target)
        content = blobs.get(step.target) if step.target is not None else None  # verified first
        held = read_regular(target)
        now = content_key(held) if held is not None else None
        if now != step.current:
            return FileOutcome(step.path, "stale", "changed on disk since the plan was made; "
                                                   "left alone", now, now)
        if held is not None:
            blobs.put(held)  # durable before the file changes: the rewind can be undone
        if content is None:  # a symlink goes, never the file it names
            gone = entry if entry.is_symlink() else target
            os.unlink(gone)
            fsync_dir(gone.parent)
            return FileOutcome(step.path, "deleted", step.reason, now, None)
        _replace(target, content)
        return FileOutcome(step.path, "written", step.reason, now, step.target)
    except BlobUnavailable as exc:
        return FileOutcome(step.path, "failed", f"{exc}; the file was not touched", step.current,
                           step.current, exc.name)
    except OSError as exc:
        return FileOutcome(step.path, "failed", f"{exc.strerror or exc}", step.current,
                           _on_disk(target, step.current), "os_error")


def _on_disk(path: Path, unknown: str | None) -> str | None:
    """The hash of what `path` holds after a failure (None: absent); `unknown` if unreadable."""
    try:
        held = read_regular(path)
    except OSError:
        return unknown
    return content_key(held) if held is not None else None


def read_regular(path: Path) -> bytes | None:
    """The file's bytes, None if absent; never follows a last-moment symlink or opens a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(f"{path} is not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _temp_prefix(target: Path) -> str:
    return f".{target.name[:200]}."


def _is_temp_of(name: str, target: Path) -> bool:
    """True for a name `_replace` gives its temp files for `target`: `.<name>.<8 hex>.sk-rewind`."""
    prefix = _temp_prefix(target)
    middle = name[len(prefix):-len(TEMP_SUFFIX)]
    return (name.startswith(prefix) and name.endswith(TEMP_SUFFIX) and len(middle) == 8
            and all(c in "0123456789abcdef" for c in middle))


def _replace(target: Path, content: bytes) -> None:
    """Write `content` to `target` through a temp file: fsync, rename, fsync of the directory."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(target.lstat().st_mode)
    except FileNotFoundError:
        mode = None
    tmp = target.parent / f"{_temp_prefix(target)}{secrets.token_hex(4)}{TEMP_SUFFIX}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(target.parent)


def _sweep(target: Path) -> None:
    """Remove the temp files a killed rewind left beside `target`."""
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for entry in os.scandir(target.parent):
            if _is_temp_of(entry.name, target):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
