"""The RFD's WebSocket profile: one upgrade of `GET /acp`, then one JSON-RPC message per
text frame both ways, for as long as the connection lasts.

The `websockets` library keeps the connection alive (a ping every 20 s; no pong within 20 s
and it is lost), so a half-open connection is found without the protocol's help. acpremote
serves its WebSocket at `/acp/ws` and answers `/acp` with a description naming that path:
acp-tui follows it, so either URL reaches it.
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


async def open_websocket(
    target: RemoteTarget, deliver: Deliver, flowing: asyncio.Event, max_message: int | None
) -> WebSocketChannel:
    """Upgrade to a WebSocket at `target` (following acpremote's description of its path);
    raises `OSError` saying why it cannot."""
    url = target.url
    for _attempt in range(2):
        try:
            socket = await connect(
                url,
                additional_headers=target.request_headers(),
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
        return WebSocketChannel(socket, deliver, flowing)
    raise ConnectionRefusedError(f"{url} is not a WebSocket endpoint")


class WebSocketChannel:
    """An open WebSocket carrying JSON-RPC messages (a `Channel`)."""

    def __init__(self, socket: ClientConnection, deliver: Deliver, flowing: asyncio.Event) -> None:
        self.socket = socket
        self._deliver = deliver
        self._flowing = flowing
        """Set while the reader takes more: a message is received only then."""

    async def send(self, message: bytes) -> None:
        try:
            await self.socket.send(message, text=True)
        except ConnectionClosed as closed:
            raise ConnectionResetError(_closed(closed)) from None

    async def run(self) -> str:
        socket, deliver, flowing = self.socket, self._deliver, self._flowing
        try:
            while True:
                if not flowing.is_set():
                    await flowing.wait()
                message = await socket.recv(decode=False)
                deliver(message if isinstance(message, bytes) else message.encode())
        except ConnectionClosed as closed:
            return _closed(closed)

    async def close(self) -> None:
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
