"""Where a user's store lives by default: $SESSIONKEEPER_HOME, else the per-user data directory.

Standard library only on Linux (a tool hook asks this; `platformdirs` costs it more than its
work): the XDG rule — `$XDG_DATA_HOME/sessionkeeper` when that is an absolute path, else
`~/.local/share/sessionkeeper` — which is what `platformdirs.user_data_path` answers there (a
test holds the two equal); elsewhere, or with no usable home, platformdirs itself.
"""

from __future__ import annotations

import os
import sys

ENV_HOME = "SESSIONKEEPER_HOME"
APP = "sessionkeeper"
ENV_RESIDENT = "SESSIONKEEPER_RESIDENT"
"""Set to 0: no resident reader (the language server starts none, the CLI relays nothing)."""
_SOCKET_PATH_MAX = 107  # sun_path holds 108 bytes with its NUL


def default_root() -> str:
    """The store root: $SESSIONKEEPER_HOME (with `~` expanded), else the per-user data directory."""
    env = os.environ.get(ENV_HOME)
    if env:
        return os.path.expanduser(env)
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_DATA_HOME", "")
        if os.path.isabs(xdg):
            return os.path.join(xdg, APP)
        home = os.environ.get("HOME", "")
        if os.path.isabs(home):
            return os.path.join(home, ".local", "share", APP)
    from .. import with_site

    with_site()  # a tool hook (started with -S) may ask this
    from platformdirs import user_data_path

    return str(user_data_path(APP, appauthor=False))


def resident_socket(root: str) -> str | None:
    """Where the editor's resident reader of the store at `root` listens (`cli.resident`); None
    when there is none: $SESSIONKEEPER_RESIDENT is 0, this is not Linux (the peer check is
    Linux's), or the path is too long for a Unix socket."""
    if not sys.platform.startswith("linux") or os.environ.get(ENV_RESIDENT, "").strip() == "0":
        return None
    path = os.path.join(os.path.abspath(root), "run", "cli.sock")
    return path if len(os.fsencode(path)) <= _SOCKET_PATH_MAX else None
