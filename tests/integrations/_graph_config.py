"""The LangGraph config the saver tests address a thread (and a checkpoint) with."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig


def config(thread: str = "t1", checkpoint_id: str | None = None, **extra: Any) -> RunnableConfig:
    """A LangGraph config for `thread` (root namespace)."""
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": "", **extra}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}
