"""LangGraph's async checkpointer API over a synchronous one: each call runs its sync
counterpart off the event loop (`asyncio.to_thread`), as LangGraph's async graphs and the
conformance suite call it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)


class ThreadedAsync(BaseCheckpointSaver[str]):
    """The async methods of a saver whose sync ones do the work."""

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """`get_tuple` off the event loop."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None,
                    limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        """`list` off the event loop."""
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for item in found:
            yield item

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint,
                   metadata: CheckpointMetadata, new_versions: ChannelVersions) -> RunnableConfig:
        """`put` off the event loop."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def adelete_thread(self, thread_id: str) -> None:
        """`delete_thread` off the event loop."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """`copy_thread` off the event loop."""
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """`prune` off the event loop."""
        await asyncio.to_thread(lambda: self.prune(thread_ids, strategy=strategy))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """`delete_for_runs` off the event loop."""
        await asyncio.to_thread(self.delete_for_runs, run_ids)
