"""The `/acp` endpoint of `acp-tui serve`: who may use it, the connections it holds, and the
ASGI helpers both profiles answer with."""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_tui.protocol.jsonrpc import INVALID_REQUEST
from acp_tui.remote.serve_connection import AgentConnection
from acp_tui.remote.serve_messages import error_body
from acp_tui.transport.launcher import LaunchError

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

COOKIE = "acp-connection-id"
"""The cookie that names the connection too, for a client that keeps cookies and loses the
header (the RFD asks clients to keep cookies, for session affinity)."""


@dataclass(frozen=True)
class ServeOptions:
    """What `acp-tui serve` serves, and how."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    token: str | None
    """The bearer token every request must carry; None: none needed (loopback only)."""
    grace: float = 120.0
    """Seconds an agent outlives its client's streams, for the client to come back."""
    max_message: int = 32 * 1024 * 1024
    """The longest message a client may send (the longest an agent reads is the client's
    business: acp-tui's own limit is 64 MiB)."""
    answer_timeout: float = 120.0
    """Seconds `initialize` over HTTP may wait for the agent's answer."""


class Endpoint:
    """The endpoint's connections, and who may open them."""

    def __init__(self, options: ServeOptions, log: Callable[[str], None]) -> None:
        self.options = options
        self.log = log
        self.connections: dict[str, AgentConnection] = {}
        self._starting: dict[str, asyncio.Future[AgentConnection]] = {}
        self._expected = f"Bearer {options.token}".encode() if options.token else None
        self._closing = False

    def authorized(self, scope: Scope) -> bool:
        if self._expected is None:
            return True
        given = header(scope, "authorization") or ""
        return hmac.compare_digest(given.encode("latin-1"), self._expected)

    async def open(
        self, scope: Scope, profile: str, *, one_stream: bool, name: str | None = None
    ) -> AgentConnection:
        """A new connection, with its agent started (`LaunchError` when it cannot be)."""
        if self._closing:
            raise LaunchError("the server is shutting down")
        client = scope.get("client") or ("?", 0)
        connection = await AgentConnection.start(
            self.options.argv,
            self.options.cwd,
            env=self.options.env,
            profile=profile,
            peer=f"{client[0]}:{client[1]}",
            grace=self.options.grace,
            one_stream=one_stream,
            on_end=self._ended,
            connection_id=name,
        )
        if self._closing:  # the server began stopping while it started: `close` missed it
            connection.end("the server shut down", close_code=1001)
            await connection.closed()
            raise LaunchError("the server is shutting down")
        self.connections[connection.id] = connection
        return connection

    async def named(self, scope: Scope, name: str) -> AgentConnection:
        """The connection a client names by its path (`/acp/NAME`), started by the first
        request to name it: its SSE stream and its `initialize` come at once, and must find
        the same agent."""
        connection = self.connections.get(name)
        if connection is not None:
            return connection
        starting = self._starting.get(name)
        if starting is None:
            opening = self.open(scope, "http", one_stream=True, name=name)
            starting = self._starting[name] = asyncio.ensure_future(opening)
            starting.add_done_callback(lambda _: self._starting.pop(name, None))
        return await asyncio.shield(starting)

    async def not_started(self, scope: Scope, send: Send, error: Exception) -> None:
        """Say, in the log and to the client, that its agent could not be started."""
        self.log(f"cannot start the agent: {error}")
        await respond(send, scope, 502, INVALID_REQUEST, f"cannot start the agent: {error}")

    def find(self, scope: Scope) -> AgentConnection | None:
        """The connection a request names (`Acp-Connection-Id`, else its cookie)."""
        named = header(scope, "acp-connection-id") or cookie(scope, COOKIE)
        return None if named is None else self.connections.get(named)

    def _ended(self, connection: AgentConnection) -> None:
        if self.connections.get(connection.id) is connection:
            del self.connections[connection.id]
        self.log(connection.summary())

    async def close(self) -> None:
        """End every connection and wait for their agents to stop (and start no more)."""
        self._closing = True
        connections = list(self.connections.values())
        for connection in connections:
            connection.end("the server shut down", close_code=1001)
        await asyncio.gather(*(connection.closed() for connection in connections))


def header(scope: Scope, name: str) -> str | None:
    """A request header's value (`name` in lower case)."""
    wanted = name.encode()
    for key, value in scope["headers"]:
        if key.lower() == wanted:
            text: str = value.decode("latin-1")
            return text
    return None


def cookie(scope: Scope, name: str) -> str | None:
    for pair in (header(scope, "cookie") or "").split(";"):
        key, sep, value = pair.strip().partition("=")
        if sep and key == name:
            return value
    return None


def set_cookie(connection: AgentConnection) -> tuple[bytes, bytes]:
    return (b"set-cookie", f"{COOKIE}={connection.id}; Path=/; HttpOnly; SameSite=Strict".encode())


async def respond(
    send: Send,
    scope: Scope,
    status: int,
    code: int,
    message: str,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """An error as JSON-RPC in an HTTP response (for a WebSocket, before its upgrade)."""
    body = error_body(code, message)
    prefix = "websocket.http.response" if scope["type"] == "websocket" else "http.response"
    await send(
        {
            "type": f"{prefix}.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                *(headers or []),
                *([(b"www-authenticate", b"Bearer")] if status == 401 else []),
            ],
        }
    )
    await send({"type": f"{prefix}.body", "body": body})
