"""The Python API for agent harnesses: start, record, resume, fork, archive, list, read.

    keeper = Keeper()                                   # store from $SESSIONKEEPER_HOME or per-user dir
    with keeper.start("/path/to/repo", title="fix payment") as session:
        session.record({"type": "message", "role": "user", "text": "fix the rounding bug"})
    report, session = keeper.resume(thread_id, workspace="/path/to/repo")

`Keeper` (in `keeper/`) is a facade over services, each built once and handed what it needs.
"""

from __future__ import annotations

from .keeper.facade import Keeper
from .keeper.upkeep import Progress

__all__ = ["Keeper", "Progress"]
