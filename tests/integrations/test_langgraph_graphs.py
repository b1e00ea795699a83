"""SessionKeeperSaver under real LangGraph graphs: a subgraph interrupted and resumed by a new
saver, thread and namespace names that read like credentials (never redacted into another
name), and `list` limits against LangGraph's own InMemorySaver."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint

from sessionkeeper.integrations.langgraph import SessionKeeperSaver

from ._graph_config import config


class Steps(TypedDict):
    """The state of the graphs below: the steps taken, appended."""

    steps: Annotated[list[str], operator.add]


def _interrupting_graph() -> Any:
    """START → a subgraph (its own checkpoint namespace) → a node asking a human → END."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    inner = StateGraph(Steps)
    inner.add_node("inner", lambda state: {"steps": ["inner"]})
    inner.add_edge(START, "inner")
    inner.add_edge("inner", END)

    def ask(state: Steps) -> dict[str, Any]:
        return {"steps": [f"answer:{interrupt('continue?')}"]}

    outer = StateGraph(Steps)
    outer.add_node("child", inner.compile())
    outer.add_node("ask", ask)
    outer.add_edge(START, "child")
    outer.add_edge("child", "ask")
    outer.add_edge("ask", END)
    return outer


async def test_an_async_graph_interrupted_by_a_human_resumes_through_a_new_saver(
        store_dir: Path) -> None:
    """Fixture: `_interrupting_graph` run with ainvoke until its interrupt; a second saver on
    the store (a new process) answers it."""
    from langgraph.types import Command

    where = config("async-thread")
    with SessionKeeperSaver(store_dir) as saver:
        first = await _interrupting_graph().compile(checkpointer=saver).ainvoke(
            {"steps": []}, where)
    assert first["steps"] == ["inner"] and first["__interrupt__"][0].value == "continue?"
    with SessionKeeperSaver(store_dir) as saver:
        graph = _interrupting_graph().compile(checkpointer=saver)
        assert (await graph.aget_state(where)).next == ("ask",)
        done = await graph.ainvoke(Command(resume="yes"), where)
        history = [s.metadata["step"] async for s in graph.aget_state_history(where)
                   if s.metadata is not None]
        namespaces = {t.config["configurable"]["checkpoint_ns"] for t in saver.list(None)}
    assert done["steps"] == ["inner", "answer:yes"] and history == [2, 1, 0, -1]
    assert "" in namespaces and any(ns.startswith("child:") for ns in namespaces)


def _token_subgraph(ran: list[str]) -> Any:
    """START → a subgraph in a node named `fetch_token` (its namespace `fetch_token:<task id>`
    reads like a credential assignment): `before` runs, then `ask` waits for a human."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def before(state: Steps) -> dict[str, Any]:
        ran.append("before")
        return {"steps": ["before"]}

    inner = StateGraph(Steps)
    inner.add_node("before", before)
    inner.add_node("ask", lambda state: {"steps": [f"answer:{interrupt('token?')}"]})
    inner.add_edge(START, "before")
    inner.add_edge("before", "ask")
    inner.add_edge("ask", END)
    outer = StateGraph(Steps)
    outer.add_node("fetch_token", inner.compile())
    outer.add_edge(START, "fetch_token")
    outer.add_edge("fetch_token", END)
    return outer


def test_a_subgraph_named_like_a_credential_keeps_its_namespace_and_resumes(
        store_dir: Path) -> None:
    """Fixture: `_token_subgraph` interrupted in its subgraph; a second saver (a new process)
    answers it. Redaction must not rewrite the namespace, or the subgraph starts over."""
    from langgraph.types import Command

    where, ran = config("token-thread"), []
    with SessionKeeperSaver(store_dir) as saver:
        _token_subgraph(ran).compile(checkpointer=saver).invoke({"steps": []}, where)
    with SessionKeeperSaver(store_dir) as saver:
        graph = _token_subgraph(ran).compile(checkpointer=saver)
        (task,) = graph.get_state(where, subgraphs=True).tasks
        assert task.state is not None and task.state.values == {"steps": ["before"]}
        done = graph.invoke(Command(resume="yes"), where)
        namespaces = {t.config["configurable"]["checkpoint_ns"] for t in saver.list(None)}
    assert done["steps"] == ["before", "answer:yes"] and ran == ["before"]
    assert {ns.split(":")[0] for ns in namespaces} == {"", "fetch_token"}
    assert not any("REDACTED" in ns for ns in namespaces)


def test_the_history_of_a_thread_named_like_a_credential_names_that_thread(
        store_dir: Path) -> None:
    """Fixture: `_token_subgraph` run on thread `reset_token:7f3a9c21` (it reads like a credential
    assignment, so its records hold it redacted) until its interrupt."""
    where, ran = config("reset_token:7f3a9c21"), []
    with SessionKeeperSaver(store_dir) as saver:
        graph = _token_subgraph(ran).compile(checkpointer=saver)
        graph.invoke({"steps": []}, where)
        history = list(graph.get_state_history(where))
        assert {s.config["configurable"]["thread_id"] for s in history} == {"reset_token:7f3a9c21"}
        assert graph.get_state(history[0].config).next == ("fetch_token",)


@pytest.mark.parametrize("limit", [None, 4, 3, 2, 1, 0, -1, -3])
def test_list_honours_a_limit_as_langgraphs_in_memory_saver_does(store_dir: Path,
                                                                 limit: int | None) -> None:
    """Fixture: the same three checkpoints put in this saver and in LangGraph's InMemorySaver,
    the reference; `list` with each limit (a limit of 0 or below lists nothing there)."""
    from langgraph.checkpoint.memory import InMemorySaver

    reference = InMemorySaver()
    with SessionKeeperSaver(store_dir) as saver:
        parents: dict[int, RunnableConfig] = {}
        for step in range(3):
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"n": step}
            checkpoint["channel_versions"] = {"n": step + 1}
            for n, each in enumerate((saver, reference)):
                parents[n] = each.put(parents.get(n, config()), checkpoint,
                                      {"source": "loop", "step": step}, {"n": step + 1})
        ours = [t.checkpoint["id"] for t in saver.list(config(), limit=limit)]
    theirs = [t.checkpoint["id"] for t in reference.list(config(), limit=limit)]
    assert ours == theirs
