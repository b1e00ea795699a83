"""Commit trailers for the agent's work: who co-authored a commit and which session it came from.

`commit_trailers` is pure. A commit gets the trailers only when its staged change adds a line the
agent of the thread wrote (`agent_lines`: lines an agent version added to its file; blank and
punctuation-only lines never count). `add_trailers` lets git place them (`git interpret-trailers`,
which knows the comment character, the scissors line and existing trailer blocks), skips a
trailer already present, and replaces the message file atomically: a kill leaves it old or new.
"""

from __future__ import annotations

import codecs
import os
import subprocess
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import ids
from ..errors import BlobUnavailable, InvalidWorkspace
from .content import is_binary
from .versions import History, before_of, normalised, versions_of

_GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}


@dataclass(frozen=True)
class Coauthor:
    """The identity a `Co-authored-by:` trailer names."""

    name: str
    email: str

    def __post_init__(self) -> None:
        for part in (self.name, self.email):
            if not part or any(c in part for c in "<>\n\r"):
                raise ValueError(f"not usable in a trailer: {part!r}")


KNOWN_AGENTS = {
    "claude": Coauthor("Claude", "noreply@anthropic.com"),
    "codex": Coauthor("Codex", "noreply@openai.com"),
}
"""The identities these agents' own commits use; any other agent needs one configured."""


def commit_trailers(*, coauthor: Coauthor, thread_id: str) -> tuple[str, str]:
    """The trailers for a commit holding the agent's lines: `Co-authored-by:` and `Agent-Session:`."""
    return (f"Co-authored-by: {coauthor.name} <{coauthor.email}>",
            f"Agent-Session: {ids.thread_id(thread_id)}")


def significant(line: str) -> str | None:
    """The line as compared (stripped), or None for a line that proves nothing (no letter or digit)."""
    text = line.strip()
    return text if any(c.isalnum() for c in text) else None


def _lines(data: bytes) -> set[str]:
    return {s for line in data.decode("utf-8", "replace").splitlines() if (s := significant(line))}


def agent_lines(history: History, *, read: Callable[[str], bytes],
                authors: Collection[str] = ("agent",)) -> dict[str, frozenset[str]]:
    """{path: lines an agent version added to that file}; unreadable or binary versions are skipped."""
    out: dict[str, frozenset[str]] = {}
    for path, raw in normalised(history).items():
        before = before_of(raw)
        known = before is not None and not before.content
        prev = (_read_lines(read, before.hash) if before is not None and known else None) or set()
        added: set[str] = set()
        for version in versions_of(raw):
            now = _read_lines(read, version.hash) if not version.content else None
            if now is None:
                prev = set()
                continue
            if version.author in authors:
                added |= now - prev
            prev = now
        if added:
            out[path] = frozenset(added)
    return out


def _read_lines(read: Callable[[str], bytes], key: str | None) -> set[str] | None:
    if key is None:
        return set()
    try:
        data = read(key)
    except BlobUnavailable:
        return None
    return None if is_binary(data) else _lines(data)


def staged_lines(workspace: str | os.PathLike[str]) -> dict[str, frozenset[str]]:
    """{workspace-relative path: lines the staged change adds}, from `git diff --cached`."""
    patch = _git(workspace, "-c", "core.quotePath=false", "diff", "--cached", "--relative",
                 "--no-color", "--no-ext-diff", "--no-renames", "-U0", "--src-prefix=a/",
                 "--dst-prefix=b/")
    out: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in patch.split(b"\n"):
        if line.startswith(b"+++ "):
            name = _unquote(line[4:])
            current = out.setdefault(name[2:], set()) if name.startswith("b/") else None
        elif line.startswith(b"+") and current is not None:
            text = significant(line[1:].decode("utf-8", "replace"))
            if text:
                current.add(text)
        elif line.startswith(b"diff "):
            current = None
    return {p: frozenset(s) for p, s in out.items() if s}


def _unquote(name: bytes) -> str:
    """A path as git prints it: C-quoted ("a\\303\\251") when it holds unusual bytes."""
    name = name.rstrip(b"\t")
    if name.startswith(b'"') and name.endswith(b'"'):
        name = codecs.escape_decode(name[1:-1])[0]
    return name.decode("utf-8", "surrogateescape")


def agent_authored(staged: Mapping[str, Collection[str]],
                   agent: Mapping[str, Collection[str]]) -> tuple[str, ...]:
    """The staged paths that add at least one line the agent wrote in that file."""
    return tuple(sorted(p for p, lines in staged.items() if set(lines) & set(agent.get(p, ()))))


def add_trailers(message_file: str | os.PathLike[str], trailers: Iterable[str], *,
                 cwd: str | os.PathLike[str]) -> bool:
    """Add each trailer not already in the message (git places them); True if the file changed."""
    path = Path(message_file)
    if not path.is_absolute():
        path = Path(cwd) / path
    wanted = list(trailers)
    if not wanted:
        return False
    old = path.read_bytes()
    args = ["interpret-trailers", "--if-exists", "addIfDifferent"]
    for trailer in wanted:
        args += ["--trailer", trailer]
    new = _git(cwd, *args, stdin=old)
    if new == old:
        return False
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(new)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def trail_commit(message_file: str | os.PathLike[str], *, workspace: str | os.PathLike[str],
                 history: History, read: Callable[[str], bytes], coauthor: Coauthor,
                 thread_id: str) -> tuple[str, ...]:
    """What the prepare-commit-msg hook runs: add the trailers if the staged change holds agent lines.

    Returns the agent-authored staged paths (empty: the message was left alone).
    """
    matched = agent_authored(staged_lines(workspace), agent_lines(history, read=read))
    if matched:
        add_trailers(message_file, commit_trailers(coauthor=coauthor, thread_id=thread_id),
                     cwd=workspace)
    return matched


def _git(cwd: str | os.PathLike[str], *args: str, stdin: bytes | None = None) -> bytes:
    env = {**os.environ, **_GIT_ENV}
    try:
        done = subprocess.run(["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True,
                              check=False)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise InvalidWorkspace(f"cannot run git in {cwd}: {exc}") from None
    if done.returncode != 0:
        raise InvalidWorkspace(f"git failed in {cwd}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout
