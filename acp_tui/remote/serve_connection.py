"""One connection of `acp-tui serve`: its own agent process, and where what the agent says goes.

Every connection (a WebSocket, or a Streamable HTTP connection begun by `initialize`) starts
an agent of its own. What the agent writes is routed, line by line, to an `Outbox`: a
session's when it names the session (`params.sessionId`, or for a response, the request it
answers), else the connection's; a connection of one stream (a WebSocket, or a client of one
SSE stream) has the connection's alone. The agent outlives its streams by a grace period:
a client that comes back in time (the same `Acp-Connection-Id`) finds its agent as it was,
and what it said meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from acp_tui.remote.serve_messages import IdKey, Message, read_agent_line
from acp_tui.remote.serve_outbox import Outbox
from acp_tui.transport.launcher import PIPE_READ, AgentProcess

MAX_KEPT = 256 * 1024 * 1024
"""Bytes a connection keeps for streams that are not there; past it the client is taken to
be gone for good (an agent that floods a client who never comes back would fill memory)."""


class AgentConnection:
    """A connection's agent process, its outboxes, and its grace period."""

    def __init__(
        self,
        agent: AgentProcess,
        *,
        profile: str,
        peer: str,
        grace: float,
        one_stream: bool,
        on_end: Callable[[AgentConnection], None],
        connection_id: str | None = None,
    ) -> None:
        self.id = connection_id or str(uuid.uuid4())
        self.agent = agent
        self.profile = profile
        """How the client reached it: `websocket`, `http`, or `http` at a named path."""
        self.peer = peer
        self.grace = grace
        self.one_stream = one_stream
        self.outbox = Outbox()
        """The connection's stream: connection-level messages, or all of them (`one_stream`)."""
        self.sessions: dict[str, Outbox] = {}
        self.reason = ""
        """Why it ended (empty while it lasts)."""
        self.close_code = 1011
        """How a WebSocket says it ended: the agent's end is an internal error to the client."""
        self.received = 0
        self.sent = 0
        self.reconnects = 0
        self._started = time.monotonic()
        self._answers: dict[IdKey, str | None] = {}
        """The client's requests in flight: where each answer goes (a session, or None)."""
        self._asked: dict[IdKey, str | None] = {}
        """The agent's requests in flight, with the session each is about."""
        self._waiting: dict[IdKey, asyncio.Future[bytes]] = {}
        self._streams = 0
        self._timer: asyncio.TimerHandle | None = None
        self._on_end = on_end
        self._ended = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read_agent())
        self._closing: asyncio.Task[None] | None = None
        self._start_grace()

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        cwd: Path,
        *,
        profile: str,
        peer: str,
        grace: float,
        one_stream: bool,
        on_end: Callable[[AgentConnection], None],
        env: dict[str, str] | None = None,
        connection_id: str | None = None,
    ) -> AgentConnection:
        """Start the agent (`LaunchError` when it cannot be)."""
        agent = await AgentProcess.start(argv, cwd, env)
        return cls(
            agent,
            profile=profile,
            peer=peer,
            grace=grace,
            one_stream=one_stream,
            on_end=on_end,
            connection_id=connection_id,
        )

    # -- the client's side ----------------------------------------------------------------

    async def send(self, message: Message) -> None:
        """Pass a message of the client's on to the agent (once its stdin has room: a client
        faster than the agent waits for it)."""
        if self.reason:
            raise ConnectionError(self.reason)
        self.received += 1
        if message.is_request:
            self._answers[message.key] = message.answer_scope
        elif message.is_response:
            self._asked.pop(message.key, None)
        self._touch()
        try:
            self.agent.stdin.write(message.line + b"\n")
            await self.agent.stdin.drain()
        except (ConnectionError, RuntimeError) as error:  # its stdin closed: it is leaving
            raise ConnectionError(self.agent.exit_description()) from error

    async def ask(self, message: Message, timeout: float) -> bytes:
        """Send a request and wait for its answer, which goes nowhere else (`initialize` over
        HTTP is answered in the POST's own response)."""
        answer: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[message.key] = answer
        try:
            await self.send(message)
            return await asyncio.wait_for(answer, timeout)
        except TimeoutError:
            raise ConnectionError(f"no answer from the agent in {timeout:g} s") from None
        finally:
            self._waiting.pop(message.key, None)

    def asked_about(self, message: Message) -> str | None:
        """The session of the agent's request a response of the client's answers."""
        return self._asked.get(message.key) if message.is_response else None

    def session_outbox(self, session_id: str) -> Outbox:
        """A session's outbox, made when first named: by the agent, or by a client opening
        its stream before `session/load` names it (as the RFD's resume flow does)."""
        outbox = self.sessions.get(session_id)
        if outbox is None:
            outbox = self.sessions[session_id] = Outbox()
            if self.reason:
                outbox.close()
        return outbox

    def stream_opened(self, outbox: Outbox) -> None:
        """A stream takes from `outbox`: the grace period is off."""
        self.reconnects += outbox.streams > 1
        self._streams += 1
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def stream_closed(self) -> None:
        self._streams -= 1
        self._start_grace()

    # -- the agent's side -----------------------------------------------------------------

    async def _read_agent(self) -> None:
        stdout = self.agent.stdout
        # Grown in place: a line of many reads (a large write) is not copied again each read.
        buffer = bytearray()
        while chunk := await stdout.read(PIPE_READ):
            start = len(buffer)
            buffer += chunk
            end = buffer.rfind(b"\n", start)
            if end < 0:
                continue
            for line in bytes(buffer[:end]).split(b"\n"):
                if line.strip():
                    self._route(line)
            del buffer[: end + 1]
        if buffer.strip():
            self._route(bytes(buffer))
        await self.agent.wait()
        self.end(self.agent.exit_description())

    def _route(self, line: bytes) -> None:
        self.sent += 1
        message = read_agent_line(line)
        if message is None:
            self.outbox.put(line)
            return
        if message.is_response:
            answer = self._waiting.get(message.key)
            if answer is not None and not answer.done():
                self._answers.pop(message.key, None)
                answer.set_result(line)
                return
            session = self._answers.pop(message.key, None)
        else:
            session = message.session_id
            if message.is_request:
                self._asked[message.key] = session
        outbox = self.outbox if session is None or self.one_stream else self.session_outbox(session)
        outbox.put(line)
        if self.outbox.size + sum(box.size for box in self.sessions.values()) > MAX_KEPT:
            self.end(f"the client took none of {MAX_KEPT // 2**20} MiB the agent sent")

    # -- its end --------------------------------------------------------------------------

    def _touch(self) -> None:
        """The client is there (a POST): the grace period starts again."""
        if self._timer is not None:
            self._start_grace()

    def _start_grace(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        if self._streams == 0 and not self.reason:
            loop = asyncio.get_running_loop()
            why = f"no client for {self.grace:g} s"
            self._timer = loop.call_later(self.grace, self.end, why)

    def end(self, reason: str, close_code: int = 1011) -> None:
        """End the connection: its streams end once they have sent what is kept, and the
        agent is stopped (its process group: whatever it started too)."""
        if self.reason:
            return
        self.reason = reason
        self.close_code = close_code
        if self._timer is not None:
            self._timer.cancel()
        self.outbox.close()
        for outbox in self.sessions.values():
            outbox.close()
        for answer in self._waiting.values():
            if not answer.done():
                answer.set_exception(ConnectionError(reason))
        self._ended.set()
        self._closing = asyncio.get_running_loop().create_task(self._close())

    async def _close(self) -> None:
        await self.agent.close()
        # Gone, it may have left what it started in its process group: a second close ends it.
        await self.agent.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        self._on_end(self)

    async def closed(self) -> None:
        """Wait until the agent is stopped."""
        await self._ended.wait()
        if self._closing is not None:
            await asyncio.shield(self._closing)

    def summary(self) -> str:
        """The connection in one line, for the server's log."""
        seconds = time.monotonic() - self._started
        again = f", {self.reconnects} reconnect{'s' * (self.reconnects != 1)}"
        return (
            f"{self.peer} {self.profile} {self.id} (agent pid {self.agent.process.pid}): "
            f"{seconds:.1f} s, {self.received} messages in, {self.sent} out"
            f"{again if self.reconnects else ''}; ended: {self.reason}"
        )
