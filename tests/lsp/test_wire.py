"""How answers go on the wire (lsp/wire.py): a converted result through orjson, as the same JSON
pygls' json.dumps sends; what orjson would write differently goes out the pygls way (fixtures:
`server`, an in-process server on `store_dir` with `repo` as its workspace; `sent`, the frames its
protocol writes)."""

from __future__ import annotations

import collections
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pygls.protocol import JsonRPCResponseMessage, LanguageServerProtocol

from sessionkeeper.lsp.app import dispatch
from sessionkeeper.lsp.options import ServerOptions
from sessionkeeper.lsp.rpc import PlainJson
from sessionkeeper.lsp.server import SessionKeeperServer


class Frames:
    """A writer keeping every frame written (header and body), as pygls' stdout writer gets them."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.frames.append(data)

    def close(self) -> None:
        pass


def parsed(frame: bytes) -> tuple[int, bytes]:
    """(Content-Length, body) of one frame; the length is checked against the body's bytes."""
    header, _, body = frame.partition(b"\r\n\r\n")
    length = int(header.split(b"\r\n")[0].removeprefix(b"Content-Length: "))
    assert length == len(body)
    return length, body


@pytest.fixture
def server(store_dir: Path, repo: Path) -> Iterator[SessionKeeperServer]:
    """An in-process server on `store_dir` with `repo` as its workspace (notifications dropped)."""
    ls = SessionKeeperServer(store=str(store_dir))
    ls.workspace_root = str(repo)
    ls.options = ServerOptions(watch=False)
    ls.protocol.notify = lambda method, params=None: None  # type: ignore[method-assign]
    yield ls
    ls.close_all()


@pytest.fixture
def sent(server: SessionKeeperServer) -> Frames:
    """The frames `server`'s protocol writes."""
    frames = Frames()
    server.protocol.set_writer(frames)
    return frames


def pygls_frame(server: SessionKeeperServer, message: Any) -> bytes:
    """What pygls' own protocol writes for `message` (json.dumps through the same converter)."""
    frames = Frames()
    base = LanguageServerProtocol(server, server.protocol._converter)
    base.set_writer(frames)
    base._send_data(message)
    (frame,) = frames.frames
    return frame


async def test_a_listing_goes_out_as_the_json_pygls_would_send(
        server: SessionKeeperServer, sent: Frames, repo: Path) -> None:
    """Fixtures: `server`, `sent`; two threads started in `repo`, one titled in non-ASCII text,
    listed, and the listing's response written."""
    await dispatch(server, "session/start", {"title": "café ✓ naïve"})
    await dispatch(server, "session/start", {"title": "plain"})
    page = await dispatch(server, "session/list", {})
    assert type(page) is PlainJson and len(page["threads"]) == 2
    message = JsonRPCResponseMessage(id=7, result=page, jsonrpc="2.0")
    server.protocol._send_data(message)
    (frame,) = sent.frames
    _, body = parsed(frame)
    _, theirs = parsed(pygls_frame(server, message))
    assert body != theirs  # orjson's bytes (UTF-8, no spaces) ...
    assert json.loads(body) == json.loads(theirs)  # ... the same JSON
    assert "café ✓ naïve" in body.decode("utf-8")


@pytest.mark.parametrize("result", [
    {"big": 1 << 70},  # beyond 64 bits
    {"key": {1: "not a string key"}},
    {"name": "a\udcffb"},  # a surrogate-escaped file name
    {"pair": collections.namedtuple("Pair", "a b")(1, 2)},  # json writes it as a list
], ids=["big int", "int key", "lone surrogate", "namedtuple"])
def test_what_orjson_cannot_write_as_json_does_goes_out_the_pygls_way(
        server: SessionKeeperServer, sent: Frames, result: dict[str, Any]) -> None:
    """Fixtures: `server`, `sent`; converted results orjson refuses or would write otherwise."""
    message = JsonRPCResponseMessage(id=3, result=PlainJson(result), jsonrpc="2.0")
    server.protocol._send_data(message)
    assert sent.frames == [pygls_frame(server, message)]


def test_a_float_that_is_not_finite_is_sent_as_null(server: SessionKeeperServer,
                                                    sent: Frames) -> None:
    """Fixtures: `server`, `sent`; json.dumps would write NaN and Infinity (no JSON parser takes
    them); orjson writes null."""
    message = JsonRPCResponseMessage(id=4, result=PlainJson(
        {"cost_usd": float("nan"), "other": float("inf")}), jsonrpc="2.0")
    server.protocol._send_data(message)
    (frame,) = sent.frames
    assert json.loads(parsed(frame)[1]) == {"id": 4, "jsonrpc": "2.0",
                                            "result": {"cost_usd": None, "other": None}}


def test_other_messages_are_sent_the_pygls_way(server: SessionKeeperServer,
                                               sent: Frames) -> None:
    """Fixtures: `server`, `sent`; a result that is not converted (pygls answering initialize
    would send an lsprotocol value) and a null result."""
    for result in ({"plain": "dict"}, None):
        message = JsonRPCResponseMessage(id=5, result=result, jsonrpc="2.0")
        server.protocol._send_data(message)
        assert sent.frames[-1] == pygls_frame(server, message)
