"""The git hooks `sessionkeeper git-hook install` writes: their text, and installing/removing them.

`prepare-commit-msg` runs a command (`sessionkeeper trailer --hook MSG SOURCE SHA` in phase 2)
that adds the trailers when the staged change holds the agent's lines. It never breaks a commit:
the command runs under a time limit, with stdin closed; any failure prints one line and the
hook exits 0. A hook that was there before is kept beside it (`<hook>.pre-sessionkeeper`) and
runs first, its exit status kept. `commit-msg` undoes the one harm trailers could do: git commits
a message that holds nothing but trailers, so quitting the editor without writing a message
would no longer abort the commit — this guard removes our trailers from such a message, and git
aborts as it always did. Both scripts are POSIX sh and name themselves with `MARKER`, so an
install can recognise (and replace, or remove) its own hook and leave any other alone.

`install` is idempotent (our hook is rewritten in place; another hook is moved aside once, never
overwritten) and `uninstall` removes only our hooks and puts the earlier ones back. Hook files
are written through a temp file and a rename. The hooks directory is git's (`core.hooksPath`
respected).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..errors import InvalidWorkspace
from . import gitrun

MARKER = "# sessionkeeper-git-hook v1"
PREVIOUS_SUFFIX = ".pre-sessionkeeper"
HOOKS = ("prepare-commit-msg", "commit-msg")


def is_ours(text: str) -> bool:
    """True if a hook file's text is one of ours (so install may replace it, uninstall remove it)."""
    return any(line.startswith(MARKER) for line in text.splitlines()[1:3])


def _chain() -> str:
    return (f'if [ -x "$0{PREVIOUS_SUFFIX}" ]; then\n'
            f'  "$0{PREVIOUS_SUFFIX}" "$@" || exit $?\n'
            "fi\n")


def prepare_commit_msg(*, command: Sequence[str], timeout_s: int = 5) -> str:
    """The prepare-commit-msg hook: run `command MSG SOURCE SHA` to add trailers, failing open."""
    if not command or timeout_s < 1:
        raise ValueError("a command and a timeout of at least 1 s are needed")
    run = " ".join(shlex.quote(word) for word in command)
    return (
        "#!/bin/sh\n"
        f"{MARKER} prepare-commit-msg\n"
        "# Adds Co-authored-by / Agent-Session trailers when the staged change holds lines the\n"
        "# agent of the current Session Keeper thread wrote. A failure never stops the commit.\n"
        + _chain() +
        "if command -v timeout >/dev/null 2>&1; then\n"
        f"  set -- timeout -k 1 {timeout_s} {run} \"$1\" \"${{2:-}}\" \"${{3:-}}\"\n"
        "else\n"
        f"  set -- {run} \"$1\" \"${{2:-}}\" \"${{3:-}}\"\n"
        "fi\n"
        "\"$@\" </dev/null >/dev/null 2>&1 ||\n"
        "  echo 'sessionkeeper: commit trailers not added (run `sessionkeeper trailer` to see why)' >&2\n"
        "exit 0\n"
    )


def commit_msg_guard() -> str:
    """The commit-msg hook: a message holding nothing but our trailers loses them (git then aborts)."""
    return (
        "#!/bin/sh\n"
        f"{MARKER} commit-msg\n"
        "# A message with nothing but Session Keeper's trailers was left empty by its author:\n"
        "# remove the trailers so that git aborts the commit as it would without them.\n"
        + _chain() +
        'msg="$1"\n'
        "ours='^(Co-authored-by: .*|Agent-Session: [0-9a-f-]{36})$'\n"
        "rest=$(sed '/^# -\\{24\\} >8 -\\{24\\}$/,$d' \"$msg\" | git stripspace --strip-comments |\n"
        "  grep -Ev \"$ours\" | grep -v '^[[:space:]]*$')\n"
        'if [ -z "$rest" ] && grep -Eq "$ours" "$msg"; then\n'
        '  grep -Ev "$ours" "$msg" > "$msg.sk-tmp" && mv "$msg.sk-tmp" "$msg"\n'
        "fi\n"
        "exit 0\n"
    )


def hooks_dir(repo: str | os.PathLike[str]) -> Path:
    """The directory git runs the repository's hooks from (InvalidWorkspace outside git)."""
    done = subprocess.run(["git", "rev-parse", "--git-path", "hooks"], cwd=repo,
                          capture_output=True, text=True, check=False,
                          env=gitrun.environment({"GIT_OPTIONAL_LOCKS": "0"}))
    if done.returncode != 0:
        raise InvalidWorkspace(f"{repo} is not inside a git repository: {done.stderr.strip()}")
    return (Path(repo) / done.stdout.strip()).resolve()


def install(repo: str | os.PathLike[str], *, command: Sequence[str], timeout_s: int = 5) -> list[str]:
    """Write both hooks (an earlier hook is kept as `<hook>.pre-sessionkeeper`); what was done."""
    directory = hooks_dir(repo)
    directory.mkdir(parents=True, exist_ok=True)
    texts = {"prepare-commit-msg": prepare_commit_msg(command=command, timeout_s=timeout_s),
             "commit-msg": commit_msg_guard()}
    done: list[str] = []
    for name, text in texts.items():
        path, kept = directory / name, directory / (name + PREVIOUS_SUFFIX)
        if path.exists() and not is_ours(_text(path)):
            if kept.exists():
                raise InvalidWorkspace(f"{path} is not ours and {kept} exists already; "
                                       "move one of them away first")
            os.replace(path, kept)
            done.append(f"kept {path.name} as {kept.name}")
        old = _text(path) if path.exists() else None
        if old != text:
            _write(path, text)
            done.append(f"{'updated' if old is not None else 'installed'} {path}")
    return done


def uninstall(repo: str | os.PathLike[str]) -> list[str]:
    """Remove our hooks and put the earlier ones back; another tool's hook is left alone."""
    directory = hooks_dir(repo)
    done: list[str] = []
    for name in HOOKS:
        path, kept = directory / name, directory / (name + PREVIOUS_SUFFIX)
        if not path.exists():
            continue
        if not is_ours(_text(path)):
            done.append(f"left {path} alone (not ours)")
            continue
        if kept.exists():
            os.replace(kept, path)
            done.append(f"restored {path.name} from {kept.name}")
        else:
            path.unlink()
            done.append(f"removed {path}")
    return done


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


def _write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
