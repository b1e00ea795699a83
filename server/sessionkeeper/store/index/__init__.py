"""The index: a derived, rebuildable cache of the rollouts, behind one small interface.

`base.Index` / `base.IndexBackend` are the seam; `sqlite` is the index in use (`backends`: where
it lives), `memory` the reference one the contract suite also runs; rows are frozen values
(`rows`).
"""

from .base import Index, IndexBackend
from .rows import (
    NATIVE,
    SUBAGENT,
    FileCheckpoint,
    ListQuery,
    SessionRow,
    ThreadRow,
    thread_order,
    threads_of,
)

__all__ = ["NATIVE", "SUBAGENT", "FileCheckpoint", "Index", "IndexBackend", "ListQuery",
           "SessionRow", "ThreadRow", "thread_order", "threads_of"]
