"""A remote agent's end of the connection, with the face of a local agent process.

`RemoteAgent` gives acp-tui's JSON-RPC `Connection` the very streams it reads and writes a
local agent through (an `asyncio.StreamReader`, an `asyncio.StreamWriter`) and the lifecycle
`AgentProcess` has (`wait`, `close`, `returncode`, `exit_description`), so the session, the
conversation and the front ends work on a remote agent unchanged. Each message the server
sends is fed to the reader as one line; each line the connection writes is sent as one
message, through a `Channel`: a WebSocket, or Streamable HTTP's POSTs and SSE streams.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Any

from acp_tui.remote.channel import Channel
from acp_tui.remote.target import RemoteTarget, TargetError
from acp_tui.transport.launcher import LaunchError, StderrTail

READER_LIMIT = 1 << 20
"""Bytes the reader holds before the channel stops taking messages (it pauses at twice
this): a burst is framed in bulk, and a server faster than acp-tui waits on TCP."""

WRITE_HIGH = 1 << 20
"""Bytes queued to send before a writer's `drain` waits, as a pipe's buffer makes it."""


class RemoteAgent:
    """A remote agent reached over the ACP remote transport (see the module docstring)."""

    def __init__(self, target: RemoteTarget) -> None:
        loop = asyncio.get_running_loop()
        self.target = target
        self.argv = [target.url]
        self.stderr = StderrTail()
        """Always empty: a remote agent's stderr stays on its machine."""
        self.flowing = asyncio.Event()
        """Set while the reader takes more; a channel waits on it before delivering."""
        self.flowing.set()
        self._wire = _Wire(self)
        self.stdout = asyncio.StreamReader(limit=READER_LIMIT, loop=loop)
        self.stdout.set_transport(self._wire)
        protocol = asyncio.streams.FlowControlMixin(loop)
        self._wire.protocol = protocol
        self.stdin = asyncio.StreamWriter(self._wire, protocol, None, loop)
        self.channel: Channel | None = None
        self._outgoing: deque[bytes] = deque()
        self._queued = 0
        self._wake = asyncio.Event()
        self._ended: asyncio.Future[str] = loop.create_future()
        self._closed_by_us = False
        self._reached = False
        """Whether the server was reached: the WebSocket upgraded, or over HTTP (where nothing
        is sent before the first message) the server answered something."""
        self._tasks: list[asyncio.Task[Any]] = []

    @classmethod
    async def connect(cls, target: RemoteTarget, *, max_message: int | None = None) -> RemoteAgent:
        """Open a connection to `target` (raises `LaunchError`, saying why it cannot)."""
        agent = cls(target)
        try:
            if target.websocket:
                from acp_tui.remote.websocket import open_websocket

                agent.channel = await open_websocket(
                    target, agent.deliver, agent.flowing, max_message
                )
                agent._reached = True
            else:
                from acp_tui.remote.streamable_http import StreamableHttp

                agent.channel = await StreamableHttp.open(target, agent.deliver, agent.flowing)
        except TargetError as error:
            raise LaunchError(str(error)) from None
        except (OSError, TimeoutError) as error:
            raise LaunchError(f"cannot connect to {target.url}: {_reason(error)}") from None
        agent._tasks = [
            asyncio.ensure_future(agent._receive()),
            asyncio.ensure_future(agent._send()),
        ]
        return agent

    # -- the face of an agent process ---------------------------------------------------------

    @property
    def returncode(self) -> int | None:
        """None while connected; 0 once acp-tui closed the connection, 1 once it was lost."""
        if not self._ended.done():
            return None
        return 0 if self._closed_by_us else 1

    def exit_description(self) -> str:
        if not self._ended.done():
            return f"the connection to {self.target.url} is open"
        if self._closed_by_us:
            return f"the connection to {self.target.url} was closed"
        if not self._reached:
            return f"cannot connect to {self.target.url}: {self._ended.result()}"
        return f"the connection to {self.target.url} was lost: {self._ended.result()}"

    async def wait(self) -> int:
        await asyncio.shield(self._ended)
        return self.returncode or 0

    async def close(self, grace: float = 2.0) -> int:
        """Close the connection: what is queued is sent first (for `grace` seconds at most)."""
        if not self._ended.done():
            self._closed_by_us = True
            self._wire.closing = True
            self._wake.set()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._tasks[1]), grace)
        if self.channel is not None:
            # Ended by a failure too: its streams and HTTP client are stopped all the same.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.channel.close(), grace)
        if not self._ended.done():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._ended), grace)
            self._end("closed")
        for task in self._tasks:
            task.cancel()
        return await self.wait()

    # -- the pumps ----------------------------------------------------------------------------

    def deliver(self, messages: list[bytes]) -> None:
        """Messages from the server (those of one read, in order), as lines for the
        connection, in one piece."""
        if self.stdout.at_eof() or self._ended.done() or not messages:
            return
        self._reached = True
        run = b"\n".join(messages)
        if run.count(b"\n") != len(messages) - 1:
            # Only JSON's whitespace can be a raw newline (in a string it is escaped): a
            # pretty-printed message is still one line once it is a space.
            run = b"\n".join(m.replace(b"\r\n", b" ").replace(b"\n", b" ") for m in messages)
        self.stdout.feed_data(run)
        self.stdout.feed_data(b"\n")

    def queue(self, data: bytes) -> None:
        """Lines the connection wrote: each one is a message to send."""
        for line in data.split(b"\n"):
            if line.strip():
                self._outgoing.append(line)
                self._queued += len(line)
        self._wake.set()
        if self._queued > WRITE_HIGH:
            self._wire.pause()

    async def _send(self) -> None:
        channel = self.channel
        assert channel is not None
        try:
            while True:
                while self._outgoing:
                    line = self._outgoing.popleft()
                    self._queued -= len(line)
                    await channel.send(line)
                    if self._queued <= WRITE_HIGH // 2:
                        self._wire.resume()
                if self._wire.closing:
                    return
                self._wake.clear()
                await self._wake.wait()
        except Exception as error:  # any failure ends the connection, said, never silently
            self._end(_reason(error))

    async def _receive(self) -> None:
        channel = self.channel
        assert channel is not None
        try:
            reason = await channel.run()
        except Exception as error:  # as in `_send`: an HTTP or token error ends it too
            reason = _reason(error)
        self._end(reason)

    def _end(self, reason: str) -> None:
        """The connection is over: the reader ends, writers fail, `wait` returns."""
        if self._ended.done():
            return
        self._ended.set_result(reason)
        self._wire.closing = True
        self.flowing.set()
        self.stdout.feed_eof()
        self._wire.protocol.connection_lost(None)
        self._wake.set()


class _Wire(asyncio.Transport):
    """The transport under the remote agent's reader and writer: writes become messages to
    send, and the reader's flow control gates the channel."""

    def __init__(self, agent: RemoteAgent) -> None:
        super().__init__()
        self.agent = agent
        self.closing = False
        self.protocol: asyncio.streams.FlowControlMixin
        self._paused = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self.closing:
            self.agent.queue(bytes(data))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        """The connection's input closed (as a process's stdin is, to say goodbye)."""
        self.closing = True
        self.agent._wake.set()

    def pause_reading(self) -> None:
        self.agent.flowing.clear()

    def resume_reading(self) -> None:
        self.agent.flowing.set()

    def get_write_buffer_size(self) -> int:
        return self.agent._queued

    def pause(self) -> None:
        if not self._paused:
            self._paused = True
            self.protocol.pause_writing()

    def resume(self) -> None:
        if self._paused:
            self._paused = False
            self.protocol.resume_writing()


def _reason(error: BaseException) -> str:
    return str(error) or type(error).__name__
