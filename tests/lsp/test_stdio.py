"""The server on stdio (lsp/stdio.py): a pipe or a socket read by the event loop, messages cut
anywhere between writes, the end of input, and pygls' own reader for a file on stdin; each test
runs `sessionkeeper serve --stdio` as a real subprocess and speaks JSON-RPC bytes to it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, BinaryIO

import pytest

from sessionkeeper.lsp.stdio import loop_readable
from tests.lsp._client import server_env

WAIT_S = 20


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def request(rid: int, method: str, params: Any = None) -> bytes:
    return frame({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})


def initialize(rid: int = 1) -> bytes:
    return request(rid, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})


EXIT = frame({"jsonrpc": "2.0", "method": "exit"})


def responses(out: IO[bytes], count: int) -> dict[int, Any]:
    """The next `count` responses the server writes (notifications skipped), by id."""
    found: dict[int, Any] = {}
    while len(found) < count:
        length = 0
        while (line := out.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if not length:
            break  # end of output
        message = json.loads(out.read(length))
        if "id" in message and "method" not in message:
            found[message["id"]] = message
    return found


def spawn(tmp_path: Path, stdin: Any) -> subprocess.Popen[bytes]:
    env = server_env(tmp_path / "store", tmp_path)
    env["SESSIONKEEPER_LOG"] = "WARNING"
    return subprocess.Popen([sys.executable, "-m", "sessionkeeper", "serve", "--stdio"],
                            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def stopped(proc: subprocess.Popen[bytes]) -> int:
    """Shut the server down as a client does (exit after shutdown's answer); its exit code."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(request(99, "shutdown"))
    proc.stdin.flush()
    assert sorted(responses(proc.stdout, 1)) == [99]
    proc.stdin.write(EXIT)
    proc.stdin.close()
    return proc.wait(timeout=WAIT_S)


def test_messages_cut_anywhere_across_writes_on_a_pipe_are_answered(tmp_path: Path) -> None:
    """Frames written in pieces (inside the header, between header and body, inside the body),
    and two frames in one write: every request is answered; shutdown and exit end it with 0."""
    proc = spawn(tmp_path, subprocess.PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None
    first, listed = initialize(1), request(2, "session/list")
    pieces = [first[:9], first[9:22], first[22:40], first[40:], listed[:30],
              listed[30:] + request(3, "session/list")]
    for piece in pieces:
        proc.stdin.write(piece)
        proc.stdin.flush()
        time.sleep(0.05)
    got = responses(proc.stdout, 3)
    assert sorted(got) == [1, 2, 3]
    assert stopped(proc) == 0
    assert got[1]["result"]["serverInfo"]["name"] == "sessionkeeper"
    assert got[2]["result"]["threads"] == []


def test_an_overlong_header_line_is_skipped(tmp_path: Path) -> None:
    """A header line of 200 KiB (beyond the reader's line limit) is skipped like any header the
    server does not know; the requests before and after it are answered."""
    proc = spawn(tmp_path, subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    listed = request(2, "session/list")
    proc.stdin.write(initialize(1) + b"X-Junk: " + b"j" * 200_000 + b"\r\n" + listed)
    proc.stdin.flush()
    assert sorted(responses(proc.stdout, 2)) == [1, 2]
    assert stopped(proc) == 0


def test_a_socket_on_stdin_is_served_like_a_pipe(tmp_path: Path) -> None:
    """A socket pair (what VS Code's node gives its server on Unix) on stdin."""
    ours, theirs = socket.socketpair()
    with ours:
        proc = spawn(tmp_path, theirs)
        theirs.close()
        ours.sendall(initialize(1) + request(2, "session/list"))
        assert proc.stdout is not None
        assert sorted(responses(proc.stdout, 2)) == [1, 2]
        ours.sendall(request(3, "shutdown"))
        assert sorted(responses(proc.stdout, 1)) == [3]
        ours.sendall(EXIT)
        assert proc.wait(timeout=WAIT_S) == 0


def test_input_ending_inside_a_body_ends_the_server(tmp_path: Path) -> None:
    """The client goes away in the middle of a message: the server stops, not hangs."""
    proc = spawn(tmp_path, subprocess.PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(initialize(1) + request(2, "session/list")[:-5])
    proc.stdin.close()
    assert sorted(responses(proc.stdout, 2)) == [1]
    proc.wait(timeout=WAIT_S)


def test_a_file_on_stdin_keeps_pygls_reader(tmp_path: Path) -> None:
    """A regular file cannot be watched by epoll: the frames in it are read by pygls' reader."""
    messages = tmp_path / "messages"
    messages.write_bytes(initialize(1) + request(2, "session/list"))
    with messages.open("rb") as stdin:
        proc = spawn(tmp_path, stdin)
        assert proc.stdout is not None
        assert sorted(responses(proc.stdout, 2)) == [1, 2]
        proc.wait(timeout=WAIT_S)  # the end of the file ends the server


@pytest.mark.parametrize(("kind", "readable"), [("pipe", True), ("socket", True),
                                                ("file", False), ("devnull", False)])
def test_loop_readable_is_true_for_pipes_and_sockets_only(tmp_path: Path, kind: str,
                                                          readable: bool) -> None:
    """What the event loop can watch; a file, /dev/null (epoll refuses both) are not."""
    closers: list[Any] = []
    stream: BinaryIO
    if kind == "pipe":
        r, w = os.pipe()
        stream = os.fdopen(r, "rb")
        closers = [stream, os.fdopen(w, "wb")]
    elif kind == "socket":
        a, b = socket.socketpair()
        stream = a.makefile("rb")
        closers = [stream, a, b]
    else:
        path = tmp_path / "f" if kind == "file" else Path(os.devnull)
        path.touch(exist_ok=True)
        stream = path.open("rb")
        closers = [stream]
    try:
        assert loop_readable(stream) is readable
    finally:
        for c in closers:
            c.close()
