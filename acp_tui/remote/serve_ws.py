"""The RFD's WebSocket profile: `GET /acp` with `Upgrade: websocket`, then one JSON-RPC
message per text frame both ways (binary frames are ignored, as the RFD says).

The upgrade starts a connection and answers with its `Acp-Connection-Id`. A WebSocket that
ends leaves its agent running for the grace period: hypercorn reports every close as 1006, a
normal close and a lost connection alike, so either may be a client coming back. One that does
upgrades again with that `Acp-Connection-Id` in its request (the RFD leaves reconnecting to
implementers: this header is acp-tui's way; an unknown id is a 404) and gets its agent as it
left it, with what the agent said meanwhile. `DELETE /acp` with the id ends it at once.
"""

from __future__ import annotations

import asyncio

from acp_tui.protocol.jsonrpc import INVALID_REQUEST
from acp_tui.remote.serve_connection import AgentConnection
from acp_tui.remote.serve_endpoint import (
    Endpoint,
    Receive,
    Scope,
    Send,
    header,
    respond,
    set_cookie,
)
from acp_tui.remote.serve_messages import BadMessage, error_body, read_message
from acp_tui.transport.launcher import LaunchError

NORMAL_CLOSURE = 1000
_REASON_BYTES = 123
"""The most a close frame's reason may hold."""


async def handle_websocket(endpoint: Endpoint, scope: Scope, receive: Receive, send: Send) -> None:
    if (await receive())["type"] != "websocket.connect":
        return
    connection = await _connection_for(endpoint, scope, send)
    if connection is None:
        return
    headers = [(b"acp-connection-id", connection.id.encode()), set_cookie(connection)]
    await send({"type": "websocket.accept", "headers": headers})
    token = connection.outbox.attach()
    connection.stream_opened(connection.outbox)
    sending = asyncio.ensure_future(_send_all(connection, token, send))
    receiving = asyncio.ensure_future(_receive_all(connection, receive))
    try:
        await asyncio.wait({sending, receiving}, return_when=asyncio.FIRST_COMPLETED)
        if sending.done():  # the connection ended, or a newer WebSocket took its place
            why = connection.reason or "another WebSocket took this connection"
            code = connection.close_code if connection.reason else NORMAL_CLOSURE
            reason = why.encode()[:_REASON_BYTES].decode(errors="ignore")
            await send({"type": "websocket.close", "code": code, "reason": reason})
    finally:
        sending.cancel()
        receiving.cancel()
        await asyncio.gather(sending, receiving, return_exceptions=True)
        connection.outbox.detach(token)
        connection.stream_closed()


async def _connection_for(endpoint: Endpoint, scope: Scope, send: Send) -> AgentConnection | None:
    """A new connection, or the one the upgrade names to come back to; None once refused."""
    given = header(scope, "acp-connection-id")
    if given is not None:
        connection = endpoint.connections.get(given)
        if connection is None or connection.profile != "websocket":
            why = f"no WebSocket connection {given} here (it ended, or never was)"
            await respond(send, scope, 404, INVALID_REQUEST, why)
        return connection if connection is not None and connection.profile == "websocket" else None
    try:
        return await endpoint.open(scope, "websocket", one_stream=True)
    except LaunchError as error:
        await endpoint.not_started(scope, send, error)
        return None


async def _send_all(connection: AgentConnection, token: object, send: Send) -> None:
    while (taken := await connection.outbox.take(token)) is not None:
        try:
            await send({"type": "websocket.send", "text": taken[0][1].decode("utf-8", "replace")})
        except BaseException:
            connection.outbox.put_back(taken)
            raise


async def _receive_all(connection: AgentConnection, receive: Receive) -> None:
    """Pass the client's messages to the agent until it goes."""
    while (event := await receive())["type"] != "websocket.disconnect":
        text = event.get("text")
        if text is None:
            continue
        try:
            await connection.send(read_message(text.encode()))
        except BadMessage as bad:
            connection.outbox.put(error_body(bad.code, str(bad)))
        except ConnectionError:
            pass  # the agent is gone: the connection's end closes this WebSocket, saying why
