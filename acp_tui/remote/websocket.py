"""The RFD's WebSocket profile: one upgrade of `GET /acp`, then one JSON-RPC message per
text frame both ways, for as long as the connection lasts.

The `websockets` library keeps the connection alive (a ping every 20 s; no pong within 20 s
and it is lost), so a half-open connection is found without the protocol's help. A WebSocket
that drops is upgraded again at once, naming its connection (`Acp-Connection-Id`, and the
cookies): a server that keeps connections across drops (`acp-tui serve`, for its grace period)
answers with the same id, and the connection goes on, with what the agent said meanwhile;
any other answer, and the connection is lost (the conversation then opens a new one and
reopens its session). acpremote serves its WebSocket at `/acp/ws` and answers `/acp` with a
description naming that path: acp-tui follows it, so either URL reaches it.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from acp_tui import __version__
from acp_tui.remote.channel import Deliver
from acp_tui.remote.target import RemoteTarget

OPEN_TIMEOUT = 15.0
"""Seconds the TCP connection, TLS and the upgrade may take."""

RESUME_DELAYS = (0.0, 0.3, 1.0)
"""Seconds before each upgrade that tries to take a dropped connection up again."""

CONNECTION_ID = "Acp-Connection-Id"


async def open_websocket(
    target: RemoteTarget, deliver: Deliver, flowing: asyncio.Event, max_message: int | None
) -> WebSocketChannel:
    """Upgrade to a WebSocket at `target` (following acpremote's description of its path);
    raises `OSError` saying why it cannot."""
    socket, url = await _upgrade(target, target.url, max_message)
    return WebSocketChannel(socket, target, url, deliver, flowing, max_message)


async def _upgrade(
    target: RemoteTarget, url: str, max_message: int | None, connection_id: str | None = None
) -> tuple[ClientConnection, str]:
    """A WebSocket at `url` (or the path acpremote's description there names), and its URL."""
    headers = target.request_headers()
    if connection_id is not None:
        headers[CONNECTION_ID] = connection_id
    for _attempt in range(2):
        try:
            socket = await connect(
                url,
                additional_headers=headers,
                user_agent_header=f"acp-tui/{__version__}",
                compression=None,  # deflate costs more CPU than it saves on a LAN or loopback
                open_timeout=OPEN_TIMEOUT,
                max_size=max_message,
                max_queue=None,  # the reader's flow control holds the server back instead
                proxy=None,
            )
        except InvalidStatus as error:
            response = error.response
            moved = _described_path(response.body) if response.status_code == 200 else None
            if moved is not None and urlsplit(url).path != moved:
                url = urlunsplit(urlsplit(url)._replace(path=moved))
                continue
            raise ConnectionRefusedError(_refusal(response.status_code, response.body)) from None
        except TimeoutError:
            raise TimeoutError(f"no WebSocket upgrade within {OPEN_TIMEOUT:g} s") from None
        except (OSError, ValueError) as error:  # ValueError: websockets' InvalidURI and kin
            raise OSError(str(error) or type(error).__name__) from None
        if socket.response is not None:
            target.keep_cookies(socket.response.headers.get_all("Set-Cookie"))
        return socket, url
    raise ConnectionRefusedError(f"{url} is not a WebSocket endpoint")


class WebSocketChannel:
    """An open WebSocket carrying JSON-RPC messages (a `Channel`)."""

    def __init__(
        self,
        socket: ClientConnection,
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
        """Set while the reader takes more: a message is received only then."""
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
            await socket.send(message, text=True)
        except ConnectionClosed as closed:
            # Dropped: sent again once (and if) the connection is taken up again.
            if not await self._taken_up(socket):
                raise ConnectionResetError(_closed(closed)) from None
            await self.send(message)

    async def run(self) -> str:
        deliver, flowing = self._deliver, self._flowing
        while True:
            socket = self.socket
            try:
                while True:
                    if not flowing.is_set():
                        await flowing.wait()
                    message = await socket.recv(decode=False)
                    deliver(message if isinstance(message, bytes) else message.encode())
            except ConnectionClosed as closed:
                if not await self._taken_up(socket):
                    return _closed(closed)

    async def _taken_up(self, dropped: ClientConnection) -> bool:
        """Whether the connection goes on after `dropped` closed: taken up again (once, for
        the reader and the writers that saw it drop), or already."""
        if self.socket is not dropped:
            return True
        if self._closing:
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
                socket, _url = await _upgrade(self.target, self.url, self._max_message, wanted)
            except (OSError, TimeoutError):
                continue
            response = socket.response
            if response is None or response.headers.get(CONNECTION_ID) != wanted:
                await socket.close()  # a new connection: not this one's agent
                return False
            self.socket = socket
            return True
        return False

    async def close(self) -> None:
        self._closing = True
        await self.socket.close()


def _closed(closed: ConnectionClosed) -> str:
    received = closed.rcvd
    if received is None:
        return "the server went away without closing the WebSocket"
    reason = f": {received.reason}" if received.reason else ""
    return f"the server closed the WebSocket ({received.code}{reason})"


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
