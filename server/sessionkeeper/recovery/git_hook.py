"""The git hooks `sessionkeeper git-hook install` writes: their text, generated (nothing installed here).

`prepare-commit-msg` runs a command (`sessionkeeper trailer --hook MSG SOURCE SHA` in phase 2)
that adds the trailers when the staged change holds the agent's lines. It never breaks a commit:
the command runs under a time limit, with stdin closed; any failure prints one line and the
hook exits 0. A hook that was there before is kept beside it (`<hook>.pre-sessionkeeper`) and
runs first, its exit status kept. `commit-msg` undoes the one harm trailers could do: git commits
a message that holds nothing but trailers, so quitting the editor without writing a message
would no longer abort the commit — this guard removes our trailers from such a message, and git
aborts as it always did. Both scripts are POSIX sh and name themselves with `MARKER`, so an
install can recognise (and replace, or remove) its own hook and leave any other alone.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

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
