"""Which machine this process runs on, as sessions record it (`session_meta.machine`) and the
shared index filters by: the host name ($SESSIONKEEPER_MACHINE, else the system's) and the user.

Read from the environment and the OS only (no socket, no network): a start never waits for it.
"""

from __future__ import annotations

import os

ENV_MACHINE = "SESSIONKEEPER_MACHINE"
"""Names this machine instead of its host name (e.g. `laptop`, `ci`)."""


def host_name() -> str:
    """This machine's name: $SESSIONKEEPER_MACHINE, else the host name."""
    return os.environ.get(ENV_MACHINE, "").strip() or os.uname().nodename or "unknown"


def user_name() -> str | None:
    """The operating-system user running this process (None when the system cannot say)."""
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return os.environ.get("USER") or os.environ.get("LOGNAME") or None

