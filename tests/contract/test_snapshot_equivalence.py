"""A replay from the latest snapshot answers exactly as a replay of every record (property test).

Fixture: real sessions in a temporary store on `repo`, fed generated record streams through the
API (re-delivered message ids and operations, big texts, clears, compactions, several sessions of
one thread); automatic snapshots fall wherever the small byte budget puts them.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionkeeper.api import Keeper
from sessionkeeper.errors import InvalidEvent, OperationConflict
from sessionkeeper.recovery.state import SessionState

_TEXT = st.one_of(st.text(max_size=5), st.builds(lambda n: "z" * n, st.integers(8000, 9000)))
_EVENTS = st.one_of(
    st.builds(lambda r, t, m: {"type": "message", "role": r, "text": t,
                               **({"message_id": f"m-{m}"} if m is not None else {})},
              st.sampled_from(["user", "assistant"]), _TEXT,
              st.one_of(st.none(), st.integers(0, 5))),
    st.builds(lambda i, s, a: {"type": "operation", "operation_id": f"op-{i}", "tool": "t",
                               "status": s, **({"args": {"a": a}} if a is not None else {})},
              st.integers(0, 4), st.sampled_from(["started", "committed", "failed"]),
              st.one_of(st.none(), st.integers(0, 1))),
    st.builds(lambda m, n: {"type": "cost", "model": m, "input_tokens": n},
              st.sampled_from(["m1", "m2"]), st.integers(0, 99)),
    st.builds(lambda n: {"type": "todo", "items": [{"id": str(i), "text": "t"} for i in range(n)]},
              st.integers(0, 3)),
    st.builds(lambda p: {"type": "file_change", "path": p, "after_hash": "a" * 64,
                         "author": "agent"}, st.sampled_from(["a.py", "b.py"])),
    st.just({"type": "verifier", "kind": "tests", "passed": 1, "total": 2}),
    st.just({"type": "title", "title": "t"}),
    st.just("clear"), st.just("compact"), st.just("snapshot"), st.just("resume"),
)


def _answers(state: SessionState) -> dict[str, Any]:
    """What a resume gives back: every subsystem's summary and the conversation."""
    return {"summaries": state.summaries(), "conversation": state["context"].conversation(),
            "ops": state["operations"].summary()}


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(_EVENTS, max_size=40))
def test_a_replay_from_the_latest_snapshot_equals_a_replay_of_every_record(
        repo: Path, events: list[Any]) -> None:
    """Fixture: `repo`; a fresh store per example, snapshots every ~2 KB."""
    store = Path(tempfile.mkdtemp(prefix="skprop"))
    try:
        keeper = Keeper(store, snapshot_min_bytes=2048)
        session = keeper.start(repo)
        thread = session.thread_id
        for event in events:
            if event == "clear":
                session.clear("c")
            elif event == "compact":
                session.compact("summary")
            elif event == "snapshot":
                session.snapshot()
            elif event == "resume":
                session.close()
                session = keeper.resume(thread, workspace=str(repo), decision="continue")[1]
                assert session is not None
            else:
                with contextlib.suppress(InvalidEvent, OperationConflict):  # refused: not written
                    session.record(event)
        live = _answers(session.state)
        session.close()
        latest, whole = keeper.replay(thread), keeper.replay(thread, full=True)
        assert _answers(latest.state) == _answers(whole.state)
        assert live["conversation"] == _answers(whole.state)["conversation"]
    finally:
        shutil.rmtree(store)
