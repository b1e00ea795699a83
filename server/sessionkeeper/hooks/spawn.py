"""A tool hook's child processes, started with `os.posix_spawn` (the `subprocess` module costs a
tool hook more than the commands it runs): git queries read back through a pipe, and a detached
catch-up that outlives the hook. Standard library only.
"""

from __future__ import annotations

import os

from ..recovery.git_env import environment


class Started:
    """A git command running; `result()` waits for it: (exit status, what it printed)."""

    __slots__ = ("pid", "fd")

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd

    def result(self) -> tuple[int, bytes]:
        """Read its output to the end and reap it (127 when it could not be started)."""
        if self.pid < 0:
            return 127, b""
        chunks = []
        try:
            while chunk := os.read(self.fd, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status), b"".join(chunks)


def git(cwd: str, *args: str) -> Started:
    """Start `git args...` in `cwd` (stdin and stderr /dev/null, our git environment)."""
    read, write = os.pipe()
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, write, 1),
               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    here = os.getcwd()
    try:
        os.chdir(cwd)  # posix_spawn has no cwd: git must find the repository from this directory
        pid = os.posix_spawnp("git", ["git", *args], environment(), file_actions=actions)
    except OSError:
        os.close(read)
        pid = -1
    finally:
        os.close(write)
        os.chdir(here)
    return Started(pid, read)


def detached(argv: list[str]) -> None:
    """Start a process of our own that outlives this one: a new session, every std stream
    /dev/null (the agent waits for nothing of it)."""
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    try:
        os.posix_spawn(argv[0], argv, dict(os.environ), file_actions=actions, setsid=True)
    except OSError:
        return
