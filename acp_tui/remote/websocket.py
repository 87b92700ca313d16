"""The RFD's WebSocket profile: one upgrade of `GET /acp`, then one JSON-RPC message per
text frame both ways, for as long as the connection lasts.

The upgrade is `websockets`' (its sans-I/O client builds the request and checks the answer);
the frames after it are read here, every frame of a TCP read in one pass, each message handed
on as it is whole: the library's own connection wakes a task and queues a frame per message,
which cost five times what acp-tui does with a message once it has it (bench/bench_remote.py).
Frames sent are the library's, masked as a client's must be. A ping every 20 s that gets no
pong within 20 s finds a half-open connection without the protocol's help.

A WebSocket that drops is upgraded again at once, naming its connection (`Acp-Connection-Id`,
and the cookies): a server that keeps connections across drops (`acp-tui serve`, for its grace
period) answers with the same id, and the connection goes on, with what the agent said
meanwhile; any other answer, and the connection is lost (the conversation then opens a new
one and reopens its session). acpremote serves its WebSocket at `/acp/ws` and answers `/acp`
with a description naming that path: acp-tui follows it, so either URL reaches it.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit, urlunsplit

from websockets.client import ClientProtocol
from websockets.exceptions import InvalidHandshake, InvalidStatus, ProtocolError
from websockets.frames import Close, Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import State
from websockets.uri import parse_uri
from websockets.utils import apply_mask

from acp_tui import __version__
from acp_tui.remote.channel import Deliver
from acp_tui.remote.target import RemoteTarget, tls_context

OPEN_TIMEOUT = 15.0
"""Seconds the TCP connection, TLS and the upgrade may take."""

RESUME_DELAYS = (0.0, 0.3, 1.0)
"""Seconds before each upgrade that tries to take a dropped connection up again."""

PING_EVERY = 20.0
"""Seconds between pings; a pong not back by the next ping, and the connection is lost."""

CONNECTION_ID = "Acp-Connection-Id"

_CONTROL = 0x08
_WHOLE_TEXT = 0x81
"""The first byte of a text frame that is a whole message (FIN, opcode 1)."""
_NO_LIMIT = 1 << 62


async def open_websocket(
    target: RemoteTarget, deliver: Deliver, flowing: asyncio.Event, max_message: int | None
) -> WebSocketChannel:
    """Upgrade to a WebSocket at `target` (following acpremote's description of its path);
    raises `OSError` saying why it cannot."""
    socket, url = await _upgrade(target, target.url, deliver, flowing, max_message)
    return WebSocketChannel(socket, target, url, deliver, flowing, max_message)


async def _upgrade(
    target: RemoteTarget,
    url: str,
    deliver: Deliver,
    flowing: asyncio.Event,
    max_message: int | None,
    connection_id: str | None = None,
) -> tuple[_Socket, str]:
    """A WebSocket at `url` (or the path acpremote's description there names), and its URL."""
    for _attempt in range(2):
        socket = _Socket(deliver, flowing, max_message)
        try:
            response = await asyncio.wait_for(
                socket.open(url, target.request_headers(), connection_id), OPEN_TIMEOUT
            )
        except TimeoutError:
            socket.abort()
            raise TimeoutError(f"no WebSocket upgrade within {OPEN_TIMEOUT:g} s") from None
        except InvalidStatus as error:
            response = error.response
            moved = _described_path(response.body) if response.status_code == 200 else None
            if moved is not None and urlsplit(url).path != moved:
                url = urlunsplit(urlsplit(url)._replace(path=moved))
                continue
            raise ConnectionRefusedError(_refusal(response.status_code, response.body)) from None
        except OSError:  # TLS refused (a certificate not trusted is a ValueError too), or TCP
            socket.abort()
            raise
        except (InvalidHandshake, ValueError) as error:  # ValueError: a URL websockets refuses
            socket.abort()
            raise ConnectionRefusedError(f"not a WebSocket upgrade: {error}") from None
        target.keep_cookies(response.headers.get_all("Set-Cookie"))
        return socket, url
    raise ConnectionRefusedError(f"{url} is not a WebSocket endpoint")


class _Socket(asyncio.Protocol):
    """One TCP connection: the upgrade, then frames read in bulk and messages handed on."""

    def __init__(self, deliver: Deliver, flowing: asyncio.Event, max_message: int | None) -> None:
        self._deliver = deliver
        self._flowing = flowing
        self._max_message = max_message
        self._transport: asyncio.Transport | None = None
        self._handshake: ClientProtocol | None = None
        self._answered: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._buffer = bytearray()
        self._fragments: list[bytes] = []
        self.closed: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        """Done once the connection is over: why (the server's close frame, or its loss)."""
        self.final = False
        """Ended for a reason a socket taken up again would meet again (a message too big)."""
        self.response: Response | None = None
        self._pinger: asyncio.Task[None] | None = None
        self._ponged = True
        self._close_sent = False
        self._resumer: asyncio.Task[None] | None = None
        """Waits for the reader to take more, reading from TCP paused meanwhile."""
        self._refused = False
        """The answer is not a 101: all of it goes to the handshake, which reads its body."""

    async def open(self, url: str, headers: dict[str, str], connection_id: str | None) -> Response:
        """Connect and upgrade: the server's 101 response (`InvalidStatus` for any other)."""
        uri = parse_uri(url)
        handshake = self._handshake = ClientProtocol(uri, max_size=self._max_message)
        request = handshake.connect()
        for name, value in headers.items():
            request.headers[name] = value
        if connection_id is not None:
            request.headers[CONNECTION_ID] = connection_id
        request.headers["User-Agent"] = f"acp-tui/{__version__}"
        handshake.send_request(request)
        context = tls_context() if uri.secure else None
        loop = asyncio.get_running_loop()
        await loop.create_connection(
            lambda: self,
            uri.host,
            uri.port,
            ssl=context,
            server_hostname=uri.host if context is not None else None,
        )
        response = await self._answered
        self.response = response
        self._pinger = asyncio.ensure_future(self._ping())
        return response

    # -- asyncio's side -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        assert self._handshake is not None
        transport.write(b"".join(self._handshake.data_to_send()))

    def data_received(self, data: bytes) -> None:
        if self.closed.done():
            return  # over (a message too big: the rest of it is not frames)
        if self._handshake is not None:
            self._upgraded(data)
            return
        buffer = self._buffer
        if buffer:  # the start of a frame the last read cut
            buffer += data
            data = bytes(buffer)
            buffer.clear()
        taken = self._frames(data)
        if taken < len(data):
            buffer += data[taken:]
        if not self._flowing.is_set() and self._resumer is None and self._transport is not None:
            # The reader is full: TCP holds the server back until it is read.
            self._transport.pause_reading()
            self._resumer = asyncio.ensure_future(self._resume_reading())

    def eof_received(self) -> bool | None:
        if self._handshake is not None:
            self._handshake.receive_eof()
            self._answer()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._answered.done():
            self._answered.set_exception(
                exc or ConnectionResetError("the server closed the connection during the upgrade")
            )
        why = f"the connection broke: {exc}" if exc else "the server went away without closing"
        self._end(why)

    # -- the upgrade --------------------------------------------------------------------------

    def _upgraded(self, data: bytes) -> None:
        """Bytes of the server's answer: its head alone goes to the handshake when it is a 101
        (what follows is frames, read here); all of it, when it is not (its body says why)."""
        handshake = self._handshake
        assert handshake is not None
        self._buffer += data
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0 and not self._refused:
            return
        self._refused = self._refused or self._buffer[:13].split(b" ")[1:2] != [b"101"]
        head = bytes(self._buffer) if self._refused else bytes(self._buffer[: end + 4])
        del self._buffer[: len(head)]
        handshake.receive_data(head)
        self._answer()
        if self._handshake is None and self._buffer:
            self.data_received(b"")

    def _answer(self) -> None:
        handshake = self._handshake
        assert handshake is not None
        responses = [e for e in handshake.events_received() if isinstance(e, Response)]
        if not responses and handshake.handshake_exc is None:
            return  # more of it to come
        self._handshake = None
        if handshake.handshake_exc is not None or handshake.state is not State.OPEN:
            error = handshake.handshake_exc or ConnectionRefusedError("the upgrade failed")
            if not self._answered.done():
                self._answered.set_exception(error)
            if self._transport is not None:
                self._transport.close()
            return
        self._answered.set_result(responses[0])

    # -- frames -------------------------------------------------------------------------------

    def _frames(self, data: bytes) -> int:
        """Take every whole frame at the start of `data`; how many bytes they were. (The hot
        path of a flood: a whole text frame, unmasked, as servers send, takes the first
        branch; everything else the general one.)"""
        at, size = 0, len(data)
        fragments, limit = self._fragments, self._max_message or _NO_LIMIT
        messages: list[bytes] = []
        while size - at >= 2:
            first, second = data[at], data[at + 1]
            length = second & 0x7F
            if length < 126:
                start = at + 2
            elif length == 126:
                if size - at < 4:
                    break
                length, start = data[at + 2] << 8 | data[at + 3], at + 4
            else:
                if size - at < 10:
                    break
                length, start = int.from_bytes(data[at + 2 : at + 10], "big"), at + 10
            if length > limit:
                self.final = True
                self.close(1009, "message too big")
                self._end(f"the server sent a message of {length:,} bytes, more than acp-tui takes")
                return size
            if first == _WHOLE_TEXT and second < 0x80 and not fragments:
                end = start + length
                if end > size:
                    break
                messages.append(data[start:end])
                at = end
                continue
            mask = b""
            if second & 0x80:  # a server must not mask; read it all the same
                if size - start < 4:
                    break
                mask, start = data[start : start + 4], start + 4
            end = start + length
            if end > size:
                break
            at, payload = end, data[start:end]
            if mask:
                payload = apply_mask(payload, mask)
            opcode = first & 0x0F
            if opcode & _CONTROL:
                self._control(opcode, payload)
            elif first & 0x80 and not fragments:
                messages.append(payload)
            else:
                fragments.append(payload)
                if first & 0x80:
                    messages.append(b"".join(fragments))
                    fragments.clear()
        self._deliver(messages)
        return at

    def _control(self, opcode: int, payload: bytes) -> None:
        if opcode == Opcode.PING:
            self._send_frame(Frame(Opcode.PONG, payload))
        elif opcode == Opcode.PONG:
            self._ponged = True
        elif opcode == Opcode.CLOSE:
            try:
                close = Close.parse(payload)
            except (ValueError, ProtocolError):
                close = Close(1005, "")
            if not self._close_sent:
                self._send_frame(Frame(Opcode.CLOSE, payload))
            if self._transport is not None:
                self._transport.close()
            reason = f": {close.reason}" if close.reason else ""
            self._end(f"the server closed the WebSocket ({close.code}{reason})")

    async def _resume_reading(self) -> None:
        await self._flowing.wait()
        self._resumer = None
        if self._transport is not None and not self._transport.is_closing():
            self._transport.resume_reading()

    async def _ping(self) -> None:
        while not self.closed.done():
            await asyncio.sleep(PING_EVERY)
            if not self._ponged:
                self.abort()
                self._end(f"no answer to a ping within {PING_EVERY:g} s")
                return
            self._ponged = False
            self._send_frame(Frame(Opcode.PING, b"acp-tui"))

    # -- sending and ending -------------------------------------------------------------------

    def send(self, message: bytes) -> None:
        if self.closed.done():
            raise ConnectionResetError(self.closed.result())
        self._send_frame(Frame(Opcode.TEXT, message))

    def _send_frame(self, frame: Frame) -> None:
        transport = self._transport
        if transport is not None and not transport.is_closing():
            transport.write(frame.serialize(mask=True))

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Say goodbye (a close frame); the server then closes the TCP connection."""
        if not self._close_sent:
            self._close_sent = True
            self._send_frame(Frame(Opcode.CLOSE, Close(code, reason).serialize()))

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()

    def _end(self, why: str) -> None:
        if not self.closed.done():
            self.closed.set_result(why)
        if self._pinger is not None:
            self._pinger.cancel()


class WebSocketChannel:
    """An open WebSocket carrying JSON-RPC messages (a `Channel`)."""

    def __init__(
        self,
        socket: _Socket,
        target: RemoteTarget,
        url: str,
        deliver: Deliver,
        flowing: asyncio.Event,
        max_message: int | None,
    ) -> None:
        self.socket = socket
        self.target = target
        self.url = url
        """Where the WebSocket is (acpremote's path, once found): where it is taken up again."""
        self._deliver = deliver
        self._flowing = flowing
        self._max_message = max_message
        self._resuming: asyncio.Task[bool] | None = None
        """While a dropped WebSocket is being taken up again: whether it was."""
        self._closing = False

    @property
    def connection_id(self) -> str | None:
        response = self.socket.response
        return response.headers.get(CONNECTION_ID) if response is not None else None

    async def send(self, message: bytes) -> None:
        socket = self.socket
        try:
            socket.send(message)
        except ConnectionResetError:
            # Dropped: sent again once (and if) the connection is taken up again.
            if not await self._taken_up(socket):
                raise
            await self.send(message)

    async def run(self) -> str:
        while True:
            socket = self.socket
            why = await asyncio.shield(socket.closed)
            if not await self._taken_up(socket):
                return why

    async def _taken_up(self, dropped: _Socket) -> bool:
        """Whether the connection goes on after `dropped` closed: taken up again (once, for
        the reader and the writers that saw it drop), or already."""
        if self.socket is not dropped:
            return True
        if self._closing or dropped.final:
            return False
        if self._resuming is None or self._resuming.done():
            self._resuming = asyncio.ensure_future(self._resume())
        return await asyncio.shield(self._resuming)

    async def _resume(self) -> bool:
        """Upgrade again, naming the connection: True when the server took it up."""
        wanted = self.connection_id
        if wanted is None:
            return False  # a server that names no connection cannot take one up
        for delay in RESUME_DELAYS:
            await asyncio.sleep(delay)
            try:
                socket, _url = await _upgrade(
                    self.target, self.url, self._deliver, self._flowing, self._max_message, wanted
                )
            except (OSError, TimeoutError):
                continue
            response = socket.response
            if response is None or response.headers.get(CONNECTION_ID) != wanted:
                socket.close()  # a new connection: not this one's agent
                return False
            self.socket = socket
            return True
        return False

    async def close(self) -> None:
        self._closing = True
        socket = self.socket
        socket.close()
        try:
            await asyncio.wait_for(asyncio.shield(socket.closed), 2.0)
        except TimeoutError:
            socket.abort()


def _described_path(body: bytes | None) -> str | None:
    """The WebSocket path an acpremote server's description (`GET /acp`) names."""
    try:
        described = json.loads(body or b"")
    except ValueError:
        return None
    path = described.get("websocket_path") if isinstance(described, dict) else None
    return path if isinstance(path, str) and path.startswith("/") else None


def _refusal(status: int, body: bytes | None) -> str:
    said = (body or b"").decode(errors="replace").strip().splitlines()
    why = f": {said[0][:200]}" if said else ""
    if status in (401, 403):
        return f"the server refused the token (HTTP {status}{why}; --token-file or ACP_TUI_TOKEN)"
    return f"the server refused the WebSocket upgrade (HTTP {status}{why})"
