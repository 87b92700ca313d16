"""The RFD's Streamable HTTP profile: POST a message, GET a long-lived SSE stream (the
connection's, or with `Acp-Session-Id` a session's), DELETE the connection.

`initialize` is answered in its POST's response (200, with `Acp-Connection-Id`); every other
POST is taken at once (202) and answered on a stream. A connection named by its path
(`/acp/NAME`) needs no header and has one stream for everything. Each SSE event is one
JSON-RPC message (`event: message`, its `id` the message's number), several sent in one piece
when they come fast; a stream opened again with `Last-Event-ID` gets what was sent after that
again (as much as is kept). A comment after 15 s of silence keeps proxies from closing an idle
stream and finds a client that is gone.
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
from acp_tui.remote.serve_messages import (
    BadMessage,
    Message,
    read_message,
    with_connection_id,
)
from acp_tui.remote.serve_outbox import Outbox
from acp_tui.transport.launcher import LaunchError

KEEPALIVE = 15.0
"""Seconds of silence on an SSE stream before a comment is sent."""
BATCH = 256 * 1024
"""Bytes of events sent in one piece when the agent outpaces the stream: a piece each costs
hypercorn a frame and a flush, which made a stream of small updates five times slower."""

_NOT_FOUND = "no connection {} here (it ended, or never was): initialize a new one"
_WEBSOCKET = "a WebSocket's connection: its messages go over the WebSocket (DELETE ends it)"


async def handle_http(
    endpoint: Endpoint, scope: Scope, receive: Receive, send: Send, name: str | None
) -> None:
    """A request to `/acp`, or to `/acp/NAME` (`name`)."""
    method = scope["method"]
    if method == "POST":
        await _post(endpoint, scope, receive, send, name)
    elif method == "GET":
        await _get(endpoint, scope, receive, send, name)
    elif method == "DELETE":
        await _delete(endpoint, scope, send, name)
    else:
        allow = [(b"allow", b"GET, POST, DELETE")]
        await respond(send, scope, 405, INVALID_REQUEST, f"{method} is not used here", allow)


async def _post(
    endpoint: Endpoint, scope: Scope, receive: Receive, send: Send, name: str | None
) -> None:
    # The body is read whole before any answer: a client still sending would not read one.
    body = await _body(receive, endpoint.options.max_message)
    if not (header(scope, "content-type") or "").lower().startswith("application/json"):
        why = "POST a JSON-RPC message as application/json"
        await respond(send, scope, 415, INVALID_REQUEST, why)
        return
    if body is None:
        limit = endpoint.options.max_message // 2**20
        await respond(send, scope, 413, INVALID_REQUEST, f"a message may be {limit} MiB at most")
        return
    try:
        message = read_message(body)
    except BadMessage as bad:
        await respond(send, scope, bad.status, bad.code, str(bad))
        return
    connection = await _connection_for(endpoint, scope, send, name, message)
    if connection is None:
        return
    if (wrong := _misaddressed(connection, scope, message)) is not None:
        await respond(send, scope, 400, INVALID_REQUEST, wrong)
        return
    try:
        if message.method == "initialize" and message.is_request:
            answer = await connection.ask(message, endpoint.options.answer_timeout)
        else:
            await connection.send(message)
            answer = None
    except ConnectionError as lost:
        await respond(send, scope, 502, INVALID_REQUEST, str(lost))
        return
    identity = [(b"acp-connection-id", connection.id.encode()), set_cookie(connection)]
    if answer is None:
        await send({"type": "http.response.start", "status": 202, "headers": identity})
        await send({"type": "http.response.body", "body": b""})
        return
    kind = (b"content-type", b"application/json")
    await send({"type": "http.response.start", "status": 200, "headers": [kind, *identity]})
    await send({"type": "http.response.body", "body": with_connection_id(answer, connection.id)})


async def _body(receive: Receive, limit: int) -> bytes | None:
    """The request's body; None when it is over `limit` bytes (read to its end all the same,
    and dropped as it comes)."""
    parts: list[bytes] = []
    size = 0
    while True:
        event = await receive()
        chunk = event.get("body", b"")
        size += len(chunk)
        if size <= limit:
            parts.append(chunk)
        else:
            parts.clear()
        if event["type"] == "http.disconnect" or not event.get("more_body", False):
            return b"".join(parts) if size <= limit else None


async def _connection_for(
    endpoint: Endpoint, scope: Scope, send: Send, name: str | None, message: Message
) -> AgentConnection | None:
    """The connection a POST is for: named by its path, or by `Acp-Connection-Id` (else its
    cookie), or a new one for an `initialize` that names none by header. None once an error
    is answered."""
    if name is not None:
        return await _named(endpoint, scope, send, name)
    given = header(scope, "acp-connection-id")
    if given is None and message.method == "initialize":
        # A fresh start: a cookie left by an earlier connection (in its grace period) must not
        # make this that connection's second initialize, which its agent refuses.
        return await _open(endpoint, scope, send)
    connection = endpoint.find(scope)
    if connection is not None and connection.profile != "http":
        await respond(send, scope, 409, INVALID_REQUEST, _WEBSOCKET)
    elif connection is not None:
        return connection
    elif given is not None:
        await respond(send, scope, 404, INVALID_REQUEST, _NOT_FOUND.format(given))
    else:
        await respond(
            send, scope, 400, INVALID_REQUEST, "no Acp-Connection-Id: POST initialize first"
        )
    return None


async def _named(endpoint: Endpoint, scope: Scope, send: Send, name: str) -> AgentConnection | None:
    connection = endpoint.connections.get(name)
    if connection is not None and connection.profile != "http":
        await respond(send, scope, 409, INVALID_REQUEST, f"{name} is a connection of another kind")
        return None
    try:
        return connection or await endpoint.named(scope, name)
    except LaunchError as error:
        await endpoint.not_started(scope, send, error)
        return None


async def _open(endpoint: Endpoint, scope: Scope, send: Send) -> AgentConnection | None:
    try:
        return await endpoint.open(scope, "http", one_stream=False)
    except LaunchError as error:
        await endpoint.not_started(scope, send, error)
        return None


def _misaddressed(connection: AgentConnection, scope: Scope, message: Message) -> str | None:
    """What is wrong with a POST's `Acp-Session-Id` for its message (RFD: a session's
    requests, and answers to the agent's requests about a session, carry it); None: nothing."""
    if connection.one_stream:
        return None
    given = header(scope, "acp-session-id")
    session = message.answer_scope or connection.asked_about(message)
    if session is None:
        return None
    if given is None:
        return f"no Acp-Session-Id: this message is about session {session}"
    if given != session:
        return f"Acp-Session-Id {given} but the message is about session {session}"
    return None


async def _get(
    endpoint: Endpoint, scope: Scope, receive: Receive, send: Send, name: str | None
) -> None:
    if "text/event-stream" not in (header(scope, "accept") or ""):
        why = "GET opens an SSE stream: Accept text/event-stream"
        await respond(send, scope, 406, INVALID_REQUEST, why)
        return
    if name is not None:
        connection = await _named(endpoint, scope, send, name)
        if connection is None:
            return
    else:
        given = header(scope, "acp-connection-id")
        connection = endpoint.find(scope)
        if connection is None:
            status, why = (
                (400, "no Acp-Connection-Id: POST initialize first")
                if given is None
                else (404, _NOT_FOUND.format(given))
            )
            await respond(send, scope, status, INVALID_REQUEST, why)
            return
        if connection.profile != "http":
            await respond(send, scope, 409, INVALID_REQUEST, _WEBSOCKET)
            return
    session = header(scope, "acp-session-id")
    outbox = (
        connection.outbox
        if session is None or connection.one_stream
        else connection.session_outbox(session)
    )
    last = header(scope, "last-event-id") or ""
    await _stream(connection, outbox, receive, send, int(last) if last.isdigit() else None)


async def _stream(
    connection: AgentConnection,
    outbox: Outbox,
    receive: Receive,
    send: Send,
    resend_after: int | None = None,
) -> None:
    """An SSE stream of `outbox`, until the client goes, another stream takes its place, or
    the connection ends; with `resend_after` (the client's `Last-Event-ID`), what was sent
    after that message first."""
    headers = [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-store"),
        (b"acp-connection-id", connection.id.encode()),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b": ok\n\n", "more_body": True})
    token = outbox.attach()
    if resend_after is not None:
        # Once attached: the stream this one replaces, not yet seen gone, would take them.
        outbox.resend(after=resend_after)
    connection.stream_opened(outbox)
    gone = asyncio.ensure_future(_disconnected(receive))
    gone.add_done_callback(lambda _: outbox.detach(token))
    try:
        while True:
            taking = asyncio.ensure_future(outbox.take(token, BATCH))
            while not (await asyncio.wait({taking}, timeout=KEEPALIVE))[0]:
                await send({"type": "http.response.body", "body": b": \n\n", "more_body": True})
            taken = taking.result()
            if taken is None:
                break
            events = b"".join(_event(number, line) for number, line in taken)
            try:
                await send({"type": "http.response.body", "body": events, "more_body": True})
            except BaseException:  # a stream cancelled mid-send too: kept for the next one
                outbox.put_back(taken)
                raise
            outbox.sent(taken)
        if not gone.done():
            await send({"type": "http.response.body", "body": b""})
    finally:
        gone.cancel()
        outbox.detach(token)
        connection.stream_closed()


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _event(number: int, line: bytes) -> bytes:
    """One SSE event of one message (a stray line of the agent's with a carriage return in
    it is cut there: SSE would take it for a line break)."""
    data = b"\ndata: ".join(line.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"))
    return b"id: %d\nevent: message\ndata: %s\n\n" % (number, data)


async def _delete(endpoint: Endpoint, scope: Scope, send: Send, name: str | None) -> None:
    connection = endpoint.connections.get(name) if name is not None else endpoint.find(scope)
    if connection is None:
        given = name or header(scope, "acp-connection-id")
        if given is None:
            await respond(send, scope, 400, INVALID_REQUEST, "no Acp-Connection-Id to end")
        else:
            await respond(send, scope, 404, INVALID_REQUEST, _NOT_FOUND.format(given))
        return
    connection.end("ended by the client (DELETE)", close_code=1000)
    await send({"type": "http.response.start", "status": 202, "headers": []})
    await send({"type": "http.response.body", "body": b""})
