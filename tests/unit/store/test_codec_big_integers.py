"""Integers beyond 64 bits on the way in (issue 12 item 19): refused with invalid_event, never a
traceback and never silently a float. The reader side (a rollout that holds one) is covered in
test_reader.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from sessionkeeper.api import Keeper
from sessionkeeper.errors import InvalidEvent
from sessionkeeper.store.codec import big_int_problem

SERVER = Path(__file__).resolve().parents[3] / "server"


def test_the_codec_names_an_integer_beyond_64_bits_in_a_line() -> None:
    """Fixture: JSON lines with the largest 64-bit integers, one beyond, and a large float."""
    assert big_int_problem(b'{"a": 18446744073709551615, "b": -9223372036854775808}') is None
    assert big_int_problem(b'{"a": 1e300, "s": "123456789012345678901234"}') is None
    why = big_int_problem(b'{"a": [1, 18446744073709551616]}')
    assert why is not None and "beyond 64 bits" in why


def test_recording_an_integer_beyond_64_bits_is_an_invalid_event(store_dir: Path,
                                                                 repo: Path) -> None:
    """Fixture: a fresh session; an operation whose args hold 2**70."""
    session = Keeper(store_dir).start(repo)
    try:
        with pytest.raises(InvalidEvent):
            session.record({"type": "operation", "operation_id": "op-1", "tool": "calc",
                            "status": "started", "args": {"n": 2**70}})
    finally:
        session.close()


def test_the_cli_never_turns_a_big_integer_into_a_float(store_dir: Path, repo: Path) -> None:
    """Fixture: `sessionkeeper start` then `record` of a message whose data holds a 24-digit int."""
    env = {**os.environ, "PYTHONPATH": str(SERVER)}
    cli = [sys.executable, "-m", "sessionkeeper", "--store", str(store_dir)]
    started = subprocess.run([*cli, "start", "--workspace", str(repo)], capture_output=True,
                             text=True, env=env, check=True)
    session = started.stdout.split()[1]
    line = '{"type":"message","role":"user","text":"x","data":{"n":123456789012345678901234}}\n'
    done = subprocess.run([*cli, "record", "--session", session], input=line,
                          capture_output=True, text=True, env=env)
    assert done.returncode == 65 and "invalid_event" in done.stdout, done.stdout


@pytest.mark.parametrize(("event", "where"), [
    ({"type": "operation", "operation_id": "op-1", "tool": "calc", "status": "started",
      "args": {"v": 1.5, "w": [0.0, float("nan")]}}, "args.w[1]"),
    ({"type": "operation", "operation_id": "op-1", "tool": "calc", "status": "committed",
      "result": float("inf")}, "result"),
    ({"type": "message", "role": "user", "text": "x", "data": {"t": -float("inf")}}, "data.t"),
    ({"type": "cost", "model": "m", "input_tokens": 1, "output_tokens": 1,
      "usd": float("nan")}, "usd"),
])
def test_recording_nan_or_an_infinity_is_an_invalid_event_naming_where(store_dir: Path,
                                                                      repo: Path, event,
                                                                      where) -> None:
    """Fixture: a fresh session; events holding NaN or an infinity (orjson would write null)."""
    session = Keeper(store_dir).start(repo)
    try:
        with pytest.raises(InvalidEvent, match=rf"^{re.escape(where)}: NaN and infinities"):
            session.record(event)
        assert session.record({"type": "message", "role": "user", "text": "still fine",
                               "data": {"none": None, "f": 0.5}}).seq > 0
    finally:
        session.close()
    lines = [orjson.loads(line) for line in Path(session.path).read_bytes().splitlines()]
    written = [r for r in lines if r["type"] == event["type"]]
    assert written == [] if event["type"] != "message" else [r["text"] for r in written] == [
        "still fine"]
