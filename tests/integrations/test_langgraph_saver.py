"""SessionKeeperSaver beyond the suite: idempotency across processes, write/checkpoint order, the
incremental and blob storage of values, redaction, the workspace check, deletion, bad configs."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

import orjson
import pytest
from langchain_core.runnables import RunnableConfig  # noqa: E402
from langgraph.checkpoint.base import CheckpointTuple, empty_checkpoint  # noqa: E402
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer  # noqa: E402
from langgraph.checkpoint.serde.types import ERROR  # noqa: E402

from sessionkeeper.api import Keeper  # noqa: E402
from sessionkeeper.errors import InvalidId, ResumeRefused  # noqa: E402
from sessionkeeper.integrations.langgraph import (  # noqa: E402
    SessionKeeperSaver,
    session_thread_id,
)
from sessionkeeper.store.reader import read_rollout  # noqa: E402

from ..conftest import git, open_files  # noqa: E402
from ._graph_config import config  # noqa: E402


def got(saver: SessionKeeperSaver, where: RunnableConfig) -> CheckpointTuple:
    """The tuple get_tuple returns for `where`, which must exist."""
    found = saver.get_tuple(where)
    assert found is not None
    return found


def put(saver: SessionKeeperSaver, parent: RunnableConfig, values: dict[str, Any],
        versions: dict[str, Any], new: dict[str, Any] | None = None,
        step: int = 0) -> RunnableConfig:
    """Put a checkpoint holding `values` at `versions` after `parent`; returns its config."""
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = dict(values)
    checkpoint["channel_versions"] = dict(versions)
    return saver.put(parent, checkpoint, {"source": "loop", "step": step},
                     dict(versions if new is None else new))


def records(store: Path, thread: str = "t1") -> list[dict[str, Any]]:
    """Every record of a LangGraph thread's rollouts, oldest first."""
    sk = session_thread_id(thread)
    out = []
    for path in sorted(store.glob("sessions/*/*/*/*.jsonl")):
        rollout = read_rollout(path)
        if rollout.meta and rollout.meta["thread_id"] == sk:
            out += rollout.records
    return sorted(out, key=lambda r: r["seq"])


def test_put_writes_are_idempotent_per_task_and_idx_across_a_new_saver(store_dir: Path) -> None:
    """Fixture: one checkpoint with writes; a second saver on the store re-delivers them."""
    with SessionKeeperSaver(store_dir) as first:
        stored = put(first, config(), {"a": 1}, {"a": 1})
        first.put_writes(stored, [("out", "first"), (ERROR, "boom 1")], task_id="task")
    with SessionKeeperSaver(store_dir) as second:
        second.put_writes(stored, [("out", "again"), (ERROR, "boom 2")], task_id="task")
        second.put_writes(stored, [("out", "again")], task_id="task")
        writes = got(second, stored).pending_writes or []
    assert sorted(w[1:] for w in writes) == [("__error__", "boom 2"), ("out", "first")]


class SlowSerializer(JsonPlusSerializer):
    """Serializes the string "slow" after a pause (and says when it started)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if obj == "slow":
            self.started.set()
            time.sleep(0.5)
        return super().dumps_typed(obj)


def test_a_checkpoint_waits_for_writes_already_under_way_and_follows_them(store_dir: Path) -> None:
    """Fixture: put_writes of a slow value on one thread; the next put arrives meanwhile
    (langgraph #8039: the superseding checkpoint must not reach the log first)."""
    serde = SlowSerializer()
    with SessionKeeperSaver(store_dir, serde=serde) as saver:
        first = put(saver, config(), {"a": 1}, {"a": 1})
        writer = threading.Thread(target=saver.put_writes, args=(first, [("out", "slow")], "t"))
        writer.start()
        assert serde.started.wait(5)
        put(saver, first, {"a": 2}, {"a": 2}, step=1)
        writer.join()
    kinds = [r["type"] for r in records(store_dir) if r["type"].startswith("checkpoint")]
    assert kinds == ["checkpoint", "checkpoint_writes", "checkpoint"]


def test_an_unchanged_channel_is_stored_once_and_large_values_live_in_blobs(
        store_dir: Path) -> None:
    """Fixture: five checkpoints; channel `doc` (100 kB) never changes, `n` always does."""
    doc = "lorem ipsum " * 9000
    with SessionKeeperSaver(store_dir) as saver:
        parent = config()
        for n in range(5):
            parent = put(saver, parent, {"doc": doc, "n": n}, {"doc": 1, "n": n + 1},
                         new={"doc": 1, "n": n + 1} if n == 0 else {"n": n + 1}, step=n)
        latest = got(saver, config())
        oldest = list(saver.list(config()))[-1]
    assert latest.checkpoint["channel_values"] == {"doc": doc, "n": 4}
    assert oldest.checkpoint["channel_values"] == {"doc": doc, "n": 0}
    stored = [v for r in records(store_dir) if r["type"] == "checkpoint" for v in r["values"]]
    assert [v[0] for v in stored].count("doc") == 1
    (doc_payload,) = [v[2] for v in stored if v[0] == "doc"]
    assert doc_payload[0] == "blob" and len(list(store_dir.glob("blobs/*/*"))) == 1
    assert sum(p.stat().st_size for p in store_dir.glob("sessions/*/*/*/*.jsonl")) < len(doc)


def test_channel_values_round_trip_exactly_and_credentials_in_metadata_are_redacted(
        store_dir: Path) -> None:
    """Fixture: a channel named like a secret holding a key-shaped string; a key in metadata."""
    key = "sk-proj-" + "A1b2C3d4" * 4
    with SessionKeeperSaver(store_dir) as saver:
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"api_token": key, "text": f"AIza{'x' * 35}"}
        checkpoint["channel_versions"] = {"api_token": 1, "text": 1}
        metadata: Any = {"source": "input", "step": -1, "note": key}
        stored = saver.put(config(), checkpoint, metadata, {"api_token": 1, "text": 1})
        found = got(saver, stored)
    assert found.checkpoint["channel_values"] == {"api_token": key, "text": f"AIza{'x' * 35}"}
    assert str(dict(found.metadata)["note"]).startswith("[REDACTED:openai_key:")
    on_disk = b"".join(p.read_bytes() for p in store_dir.glob("sessions/*/*/*/*.jsonl"))
    assert key.encode() not in on_disk


@dataclasses.dataclass
class Note:
    """A state value of a user type (what a strict serializer must be allowed to decode)."""

    text: str


def test_the_clone_with_an_allowlist_decodes_the_types_it_allows(store_dir: Path) -> None:
    """Fixture: a strict msgpack serializer (LangGraph's LANGGRAPH_STRICT_MSGPACK mode) and the
    clone `with_allowlist` returns for a state holding a dataclass, as compile() asks for it."""
    strict = JsonPlusSerializer(allowed_msgpack_modules=None)
    with SessionKeeperSaver(store_dir, serde=strict) as saver:
        allowed = saver.with_allowlist([(Note.__module__, "Note")])
        stored = put(allowed, config(), {"note": Note("hi")}, {"note": 1})
        allowed.put_writes(stored, [("note", Note("later"))], task_id="task")
        found = got(allowed, stored)
        assert got(saver, stored).checkpoint["id"] == found.checkpoint["id"]
    assert found.checkpoint["channel_values"] == {"note": Note("hi")}
    assert [w[1:] for w in found.pending_writes or []] == [("note", Note("later"))]


def run_cli(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `sessionkeeper` CLI against `store`."""
    return subprocess.run([sys.executable, "-m", "sessionkeeper", *args, "--store", str(store)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1"})


def test_gc_keeps_the_blobs_of_checkpoint_values_and_pending_writes(store_dir: Path) -> None:
    """Fixture: a checkpoint whose channel value and pending write are above the inline limit
    (both blobs), aged two hours; then the real `sessionkeeper gc` and `fsck`."""
    doc = "lorem ipsum " * 9000
    with SessionKeeperSaver(store_dir) as saver:
        stored = put(saver, config(), {"doc": doc}, {"doc": 1})
        saver.put_writes(stored, [("out", doc + "!")], task_id="task")
    blobs = list(store_dir.glob("blobs/*/*"))
    assert len(blobs) == 2
    aged = time.time() - 7200
    for blob in blobs:
        os.utime(blob, (aged, aged))
    collected = orjson.loads(run_cli(store_dir, "gc", "--json").stdout)
    assert collected["removed"] == [] and len(list(store_dir.glob("blobs/*/*"))) == 2
    with SessionKeeperSaver(store_dir) as saver:
        found = got(saver, stored)
    assert found.checkpoint["channel_values"] == {"doc": doc}
    assert [w[1:] for w in found.pending_writes or []] == [("out", doc + "!")]


def test_gc_over_its_cap_keeps_what_the_newest_checkpoint_needs(store_dir: Path) -> None:
    """Fixture: two checkpoints, each with its own blob value; the newest also with a blob
    pending write; the blobs aged two hours, then the real `sessionkeeper gc --cap 1` (everything
    is over the cap)."""
    doc = "lorem ipsum " * 9000
    with SessionKeeperSaver(store_dir) as saver:
        first = put(saver, config(), {"doc": doc}, {"doc": 1})
        newest = put(saver, first, {"doc": doc + "?"}, {"doc": 2}, step=1)
        saver.put_writes(newest, [("out", doc + "!")], task_id="task")
    aged = time.time() - 7200
    for blob in store_dir.glob("blobs/*/*"):
        os.utime(blob, (aged, aged))
    collected = orjson.loads(run_cli(store_dir, "gc", "--cap", "1", "--json").stdout)
    assert collected["removed"] == []
    with SessionKeeperSaver(store_dir) as saver:
        found = got(saver, config())
    assert found.checkpoint["channel_values"] == {"doc": doc + "?"}
    assert [w[1:] for w in found.pending_writes or []] == [("out", doc + "!")]


def test_a_graph_thread_is_listed_checked_and_refused_after_a_branch_switch(
        store_dir: Path, repo: Path) -> None:
    """Fixture: `repo` (a real git repository on fix/payment); a thread recorded there, then the
    branch switched to main."""
    with SessionKeeperSaver(store_dir, workspace=repo) as saver:
        stored = put(saver, config(), {"a": 1}, {"a": 1})
    sk = session_thread_id("t1")
    listed = orjson.loads(run_cli(store_dir, "list", "--json").stdout)
    assert [(t["thread_id"], t["agent"], t["title"]) for t in listed] == \
        [(sk, "langgraph", "langgraph t1")]
    assert run_cli(store_dir, "--check-resume", sk, "--workspace", str(repo)).returncode == 0
    git(repo, "checkout", "-q", "main")
    checked = run_cli(store_dir, "--check-resume", sk, "--workspace", str(repo), "--json")
    assert checked.returncode == 10
    assert {d["kind"] for d in orjson.loads(checked.stdout)["differences"]} == {"branch"}
    with SessionKeeperSaver(store_dir) as refusing, pytest.raises(ResumeRefused) as refused:
        put(refusing, stored, {"a": 2}, {"a": 2}, step=1)
    assert refused.value.report.verdict == "drift"
    with SessionKeeperSaver(store_dir, on_drift="continue") as going_on:
        put(going_on, stored, {"a": 2}, {"a": 2}, step=1)
        assert got(going_on, config()).checkpoint["channel_values"] == {"a": 2}
    decisions = [r.get("decision") for r in records(store_dir) if r["type"] == "lifecycle"]
    assert decisions[-1] == "continue"


def test_a_thread_without_workspace_is_continued_by_a_new_saver_in_the_same_session(
        store_dir: Path) -> None:
    """Fixture: two savers one after the other on one thread, no workspace given."""
    with SessionKeeperSaver(store_dir) as first:
        stored = put(first, config(), {"a": 1}, {"a": 1})
    with SessionKeeperSaver(store_dir) as second:
        put(second, stored, {"a": 2}, {"a": 2}, step=1)
        assert [t.metadata["step"] for t in second.list(config())] == [1, 0]
    assert len(list(store_dir.glob("sessions/*/*/*/*.jsonl"))) == 1
    sources = [r["source"] for r in records(store_dir) if r["type"] == "lifecycle"]
    assert sources == ["startup", "resume"]


def test_delete_thread_removes_its_rollouts_and_rows_and_the_thread_can_start_again(
        store_dir: Path) -> None:
    """Fixture: threads t1 and t2; t1 deleted, then written again."""
    with SessionKeeperSaver(store_dir) as saver:
        put(saver, config("t1"), {"a": 1}, {"a": 1})
        put(saver, config("t2"), {"a": 1}, {"a": 1})
        saver.delete_thread("t1")
        assert saver.get_tuple(config("t1")) is None and records(store_dir, "t1") == []
        assert saver.get_tuple(config("t2")) is not None
        put(saver, config("t1"), {"a": 9}, {"a": 1})
        assert got(saver, config("t1")).checkpoint["channel_values"] == {"a": 9}
    listed = orjson.loads(run_cli(store_dir, "list", "--json").stdout)
    assert sorted(t["title"] for t in listed) == ["langgraph t1", "langgraph t2"]


@pytest.mark.parametrize("bad", [{}, {"configurable": {}},
                                 {"configurable": {"thread_id": None}},
                                 {"configurable": {"thread_id": "t", "checkpoint_ns": 3}}])
def test_a_config_without_a_usable_thread_id_is_a_typed_error(store_dir: Path,
                                                              bad: dict[str, Any]) -> None:
    """Fixture: configs LangGraph would never send."""
    with SessionKeeperSaver(store_dir) as saver, pytest.raises(InvalidId):
        saver.get_tuple(cast(RunnableConfig, bad))


def test_closing_a_saver_closes_the_keeper_it_made_and_leaves_a_given_one_open(
        tmp_path: Path) -> None:
    """Fixture: one saver made from a path, one given a Keeper, each with a checkpoint read back:
    leaving the first's `with` leaves no file of its store open; closing the second leaves the
    caller's Keeper (its index) open until the caller closes it."""
    with SessionKeeperSaver(tmp_path / "made") as made:
        got(made, put(made, config(), {"a": 1}, {"a": 1}))
        assert open_files(tmp_path / "made") != []
    assert open_files(tmp_path / "made") == []
    with Keeper(tmp_path / "given") as keeper:
        with SessionKeeperSaver(keeper) as given:
            got(given, put(given, config(), {"a": 1}, {"a": 1}))
        keeper.threads()
        assert any(f.endswith("state.db") for f in open_files(tmp_path / "given"))
    assert open_files(tmp_path / "given") == []
