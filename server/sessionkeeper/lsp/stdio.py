"""The server on stdio with stdin read by the event loop, as pygls reads a TCP client.

pygls' stdio reader hands every header line and every body to a worker thread and back (three
thread hand-offs per message); a pipe or a socket (what an editor gives its server: VS Code's
node uses socket pairs) can be watched by the event loop itself, and an `asyncio.StreamReader`
then answers `readline` and `readexactly` from its buffer. Anything else on stdin (a file, a
terminal, /dev/null, which epoll cannot watch) keeps pygls' own reader.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
from threading import Event
from typing import BinaryIO

from pygls.io_ import StdoutWriter, run_async
from pygls.server import JsonRPCServer

log = logging.getLogger("sessionkeeper.lsp")

LINE_LIMIT = 1 << 16
"""The longest header line kept (a JSON-RPC header line is a few dozen bytes)."""
_DROPPED = b"-\r\n"
"""What a longer line reads as: a header line pygls does not know, so it is skipped."""


def loop_readable(stream: BinaryIO) -> bool:
    """Whether the event loop can watch `stream` (a pipe or a socket)."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, AttributeError):  # no descriptor (an in-memory stream), closed
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class LoopReader:
    """pygls' AsyncReader over a pipe, read by the running event loop (connected on first read)."""

    def __init__(self, pipe: BinaryIO) -> None:
        self.pipe = pipe
        self._stream: asyncio.StreamReader | None = None
        self._transport: asyncio.BaseTransport | None = None

    async def _connected(self) -> asyncio.StreamReader:
        if self._stream is None:
            stream = asyncio.StreamReader(limit=LINE_LIMIT)
            self._transport, _ = await asyncio.get_running_loop().connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(stream), self.pipe)
            self._stream = stream
        return self._stream

    async def readline(self) -> bytes:
        """The next line with its newline; what is left at end of input; b"" after it."""
        stream = await self._connected()
        try:
            return await stream.readline()
        except ValueError:  # longer than LINE_LIMIT: the stream has dropped it (up to its end)
            return _DROPPED

    async def readexactly(self, n: int) -> bytes:
        """The next `n` bytes, or what is left of them at end of input."""
        try:
            return await (await self._connected()).readexactly(n)
        except asyncio.IncompleteReadError as short:
            return short.partial

    def close(self) -> None:
        """Stop watching the pipe (and close it)."""
        if self._transport is not None:
            self._transport.close()


async def _served(server: JsonRPCServer, reader: LoopReader, stop: Event) -> None:
    """pygls' message loop over `reader`, which lets the pipe go when the loop ends."""
    try:
        await run_async(stop_event=stop, reader=reader, protocol=server.protocol, logger=log,
                        error_handler=server.report_server_error)
    finally:
        reader.close()


def start_io(server: JsonRPCServer, stdin: BinaryIO | None = None,
             stdout: BinaryIO | None = None) -> None:
    """Serve on stdio until the input ends or `exit`: pygls' `start_io`, but a pipe or socket on
    stdin is read by the event loop (`LoopReader`)."""
    pipe = stdin or sys.stdin.buffer
    if not loop_readable(pipe):
        server.start_io(stdin, stdout)
        return
    server._stop_event = stop = Event()  # what pygls' shutdown sets to end the loop
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    try:
        asyncio.run(_served(server, LoopReader(pipe), stop))
    except BrokenPipeError:
        log.error("the client closed the connection; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
