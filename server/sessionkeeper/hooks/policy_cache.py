"""The hook policy a session's tool hooks last found with `git config`, kept beside its spool so
the next call need not start git again (one git process less for every tool call).

    journals/<agent>/spool/<session id>.policy    {"cwd", "at", "stamp", "value"}

A kept answer is used while it is younger than `KEEP_S`, for the same cwd, and while the config
files `git config` and `git config --global` write are unchanged (the repository's own config;
~/.gitconfig and ~/.config/git/config, or $GIT_CONFIG_GLOBAL): a policy set there (`sessionkeeper
hooks policy`) applies from the next call, one set anywhere else (an included file,
/etc/gitconfig) within `KEEP_S`.
Invariants: a damaged or foreign cache file is a miss, never an error; it is written whole
(temp file, rename) and never fsynced (losing it costs one git run). Standard library only.
"""

from __future__ import annotations

import os
import time

from .. import jsontext
from ..store import spool
from .spawn import Started, git

KEEP_S = 5.0
"""How long a kept answer stands without a change to the config files it was stamped with."""
SUFFIX = ".policy"


def _git_config(cwd: str) -> str | None:
    """The config file of the repository `cwd` is in (found as git does, without git), or None."""
    here = cwd
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            return os.path.join(dot_git, "config")
        if os.path.isfile(dot_git):  # a linked worktree or a submodule: "gitdir: <path>"
            try:
                with open(dot_git, encoding="utf-8") as handle:
                    line = handle.readline().strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not line.startswith("gitdir:"):
                return None
            git_dir = os.path.join(here, line[7:].strip())
            try:
                with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
                    git_dir = os.path.join(git_dir, handle.readline().strip())
            except (OSError, UnicodeDecodeError):
                pass
            return os.path.normpath(os.path.join(git_dir, "config"))
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def stamp(cwd: str) -> list[object]:
    """What identifies the state of the config files `git config` would write for `cwd`."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    named = os.environ.get("GIT_CONFIG_GLOBAL")  # git reads it instead of the two user files
    user = [named] if named else [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")]
    out: list[object] = []
    for path in (_git_config(cwd), *user):
        try:
            st = os.stat(path) if path is not None else None
        except OSError:
            st = None
        out.append([path, st.st_ino, st.st_size, st.st_mtime_ns] if st is not None else [path])
    return out


def _path(journal_root: str, session_id: str) -> str:
    return os.path.join(spool.spool_dir(journal_root), session_id + SUFFIX)


def kept(journal_root: str, session_id: str, cwd: str) -> str | None:
    """The answer kept for this session's `cwd` (what `git config` printed), or None (a miss)."""
    try:
        with open(_path(journal_root, session_id), "rb") as handle:
            found = jsontext.loads(handle.read(4096))
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("cwd") != cwd or not isinstance(found.get("value"), str):
        return None
    at = found.get("at")
    if not isinstance(at, (int, float)) or not 0 <= time.time() - at < KEEP_S:
        return None
    return found["value"] if found.get("stamp") == stamp(cwd) else None


def answer(journal_root: str, session_id: str, cwd: str, key: str) -> str | Lookup:
    """The kept answer for `cwd`, or `git config --get key` started there (a `Lookup`)."""
    found = kept(journal_root, session_id, cwd)
    if found is not None:
        return found
    marks = stamp(cwd), time.time()  # before git reads the files: an edit meanwhile is a miss
    started = git(cwd if os.path.isdir(cwd) else os.path.expanduser("~"), "config", "--get", key)
    return Lookup(started, (journal_root, session_id), {"cwd": cwd, "at": marks[1], "stamp": marks[0]})


class Lookup:
    """`git config` running for the policy; `result()` waits for it and keeps its answer."""

    __slots__ = ("started", "where", "kept")

    def __init__(self, started: Started, where: tuple[str, str], kept: dict[str, object]) -> None:
        self.started, self.where, self.kept = started, where, kept

    def result(self) -> tuple[int, bytes]:
        """git's exit status and output, as `Started.result`; a clean answer is kept."""
        status, out = self.started.result()
        if status in (0, 1):  # 1: the key is not set
            value = out.decode("utf-8", "replace").strip() if status == 0 else ""
            _keep(*self.where, {**self.kept, "value": value})
        return status, out


def _keep(journal_root: str, session_id: str, answer: dict[str, object]) -> None:
    path = _path(journal_root, session_id)
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, jsontext.dumps(answer).encode())
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError:
        try:  # noqa: SIM105 - contextlib costs a tool hook its import
            os.unlink(temp)
        except OSError:
            pass
