"""The RFD's Streamable HTTP profile: each message to the server is a POST to the endpoint,
and what the server sends comes on long-lived SSE streams: one for the connection, one per
session.

`initialize` is POSTed without an `Acp-Connection-Id` and answered at once (200, JSON), with
the connection's id in its header; every later request carries it, and a session's messages
its `Acp-Session-Id` too (a request's from its `sessionId`, an answer to the server's request
from the stream that request came on). The connection's stream is opened before the answer
to `initialize` is handed on; a session's before the first request about it is sent (a
load's replay comes on it; a session the server does not know is the request's answer), and
after `session/new` or `session/fork` is answered, before that answer is handed on, so that
no prompt can be sent before the stream its updates come on is open. A stream that breaks is
opened again at once: a server that keeps the connection goes on with it; when the
connection's cannot be opened, the connection is lost. Other servers' shapes are taken where
they are unambiguous: a POST answered 200 with a JSON body, or with an SSE stream of its own
(as MCP's Streamable HTTP answers), is read; a refusal whose body is a JSON-RPC error is
that error.

HTTP/2, as the RFD asks: chosen by TLS (ALPN) over `https://`; over plain `http://` spoken
from the first byte (prior knowledge), and HTTP/1.1 for a server that does not speak it so.
Each SSE stream has a TCP connection of its own, the POSTs another (see `_read_stream`).
"""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import msgspec
from httpx_sse import EventSource, aconnect_sse

from acp_tui import __version__
from acp_tui.remote.channel import Deliver
from acp_tui.remote.target import RemoteTarget, tls_context

CONNECTION_ID = "Acp-Connection-Id"
SESSION_ID = "Acp-Session-Id"

CONNECT_TIMEOUT = 15.0
POST_TIMEOUT = 60.0
"""Seconds a POST other than `initialize` may take: the RFD has it answered at once (202)."""
RESUME_DELAYS = (0.3, 1.0)
"""Seconds before each GET that opens the connection's stream again after it broke: a server
that keeps the connection (`acp-tui serve`, for its grace period) goes on with it."""

_OPENS_SESSION = ("session/new", "session/fork")


class _Params(msgspec.Struct):
    session_id: str | None = msgspec.field(default=None, name="sessionId")


class _Error(msgspec.Struct):
    message: str = ""


class _Envelope(msgspec.Struct):
    """What routing a message needs of it."""

    jsonrpc: str | None = None
    id: int | str | None = None
    method: str | None = None
    params: _Params | None = None
    result: _Params | None = None
    error: _Error | None = None


_decode = msgspec.json.Decoder(_Envelope).decode


def _envelope(message: bytes) -> _Envelope:
    try:
        return _decode(message)
    except (msgspec.DecodeError, ValueError):
        return _Envelope()  # not ours to judge: the connection reports it


class StreamableHttp:
    """A connection over Streamable HTTP (a `Channel`; see the module docstring)."""

    def __init__(
        self,
        target: RemoteTarget,
        deliver: Deliver,
        flowing: asyncio.Event,
        http: httpx.AsyncClient,
    ) -> None:
        self.target = target
        self.http = http
        """The client of the POSTs (and the DELETE)."""
        self._cleartext_http2 = True
        """Whether plain `http://` speaks HTTP/2 (until a server shows it does not)."""
        self.connection_id: str | None = None
        self._deliver = deliver
        self._flowing = flowing
        self._streams: dict[str | None, asyncio.Task[None]] = {}
        """The open SSE streams, by session id (None: the connection's)."""
        self._last_event: dict[str | None, str] = {}
        """Each stream's last event id, said when it is opened again: an event the server sent
        as the stream broke is sent again (by a server that keeps them; others ignore it)."""
        self._asked_in: dict[int | str, str] = {}
        """The server's requests waiting for our answer, by id: the session each came in."""
        self._opening: dict[int | str, str] = {}
        """Our `session/new` and `session/fork` requests waiting for their answer, by id."""
        self._ended: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._closing = False

    @classmethod
    async def open(
        cls, target: RemoteTarget, deliver: Deliver, flowing: asyncio.Event
    ) -> StreamableHttp:
        """A client for `target`: nothing is sent until `initialize` is."""
        return cls(target, deliver, flowing, _client(target, cleartext_http2=True))

    # -- sending ------------------------------------------------------------------------------

    async def send(self, message: bytes) -> None:
        envelope = _envelope(message)
        if self.connection_id is None:
            await self._initialize(message, envelope)
            return
        session = envelope.params.session_id if envelope.params is not None else None
        if envelope.method is None and envelope.id is not None:  # our answer to its request
            session = self._asked_in.pop(envelope.id, None)
        if envelope.method is not None and session is not None:
            # Its answer comes on the session's stream (a load's replay too): open it first,
            # unless the server knows no such session, which is then the answer.
            try:
                await self._listen(session)
            except ConnectionRefusedError as refused:
                self._refuse(envelope, f"session {session}: {refused}")
                return
        if envelope.method in _OPENS_SESSION and envelope.id is not None:
            self._opening[envelope.id] = envelope.method
        headers = {CONNECTION_ID: self.connection_id}
        if session is not None:
            headers[SESSION_ID] = session
        response = await self._post(message, headers)
        try:
            await self._answered(response, envelope, session)
        finally:
            await response.aclose()

    async def _initialize(self, message: bytes, envelope: _Envelope) -> None:
        """POST `initialize`: its answer names the connection, whose stream is then opened.
        Over plain `http://` HTTP/2 is spoken from the first byte (there is no TLS to agree on
        it), and a server that does not speak it so is asked again over HTTP/1.1."""
        try:
            response = await self._post(message, {}, timeout=None)
        except ConnectionResetError:
            if not _cleartext(self.target):
                raise
            await self.http.aclose()
            self._cleartext_http2 = False
            self.http = _client(self.target, cleartext_http2=False)
            response = await self._post(message, {}, timeout=None)
        try:
            if response.status_code != 200:
                await self._answered(response, envelope, None)
                return
            body = await response.aread()
        finally:
            await response.aclose()
        self.connection_id = response.headers.get(CONNECTION_ID) or _connection_id(body)
        if not self.connection_id:
            raise ConnectionRefusedError(f"the server answered initialize without {CONNECTION_ID}")
        await self._listen(None)
        self._deliver([body])

    async def _post(
        self, message: bytes, headers: dict[str, str], timeout: float | None = POST_TIMEOUT
    ) -> httpx.Response:
        headers["Content-Type"] = "application/json"
        headers["Accept"] = "application/json, text/event-stream"
        request = self.http.build_request(
            "POST",
            self.target.url,
            content=message,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT),
        )
        try:
            response = await self.http.send(request, stream=True)
        except httpx.HTTPError as error:
            raise ConnectionResetError(_http_error(error)) from None
        self._keep_cookies()
        return response

    async def _answered(
        self, response: httpx.Response, envelope: _Envelope, session: str | None
    ) -> None:
        """What the POST's answer says: nothing (202), a message (200 JSON), a stream of them
        (200 SSE), or that the message was refused: the server's own JSON-RPC error when it
        gave one, else (to a request) an error saying so."""
        status = response.status_code
        kind = response.headers.get("Content-Type", "")
        if status == 202 or status == 204:
            return
        if status == 200 and kind.startswith("text/event-stream"):
            await self._read_events(response, session)
            return
        body = await response.aread()
        said = _envelope(body) if body.strip() else _Envelope()
        if status == 200 or (said.jsonrpc and (said.id == envelope.id or envelope.id is None)):
            if body.strip():
                self._deliver([body])  # the answer, or the server's own error for it
            return
        lines = body.decode(errors="replace").strip().splitlines()
        text = said.error.message if said.error is not None else lines[0][:200] if lines else ""
        why = f"HTTP {status}" + (f": {text}" if text else "")
        if status in (401, 403):
            why += " (the token: --token-file or ACP_TUI_TOKEN)"
        if envelope.method is not None and envelope.id is not None:
            self._refuse(envelope, f"the server refused {envelope.method}: {why}")

    def _refuse(self, request: _Envelope, message: str) -> None:
        """Answer our own `request` with an error: the server will not."""
        if request.id is not None:
            self._opening.pop(request.id, None)
            error = {"code": -32603, "message": message}
            reply = {"jsonrpc": "2.0", "id": request.id, "error": error}
            self._deliver([msgspec.json.encode(reply)])

    # -- receiving ----------------------------------------------------------------------------

    async def run(self) -> str:
        return await asyncio.shield(self._ended)

    async def _listen(self, session: str | None) -> None:
        """Open the stream of the connection (None) or of `session`, unless it is open;
        return once the server has answered it (`ConnectionRefusedError` if it refused)."""
        if session in self._streams and not self._streams[session].done():
            return
        opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._streams[session] = asyncio.ensure_future(self._stream(session, opened))
        await opened

    async def _stream(self, session: str | None, opened: asyncio.Future[None]) -> None:
        """A stream that breaks is opened again (`RESUME_DELAYS`), until the server refuses it
        (a session's, once the session is over): when the connection's cannot be, the
        connection is lost."""
        what = "the connection's event stream" if session is None else f"session {session}'s"
        for delay in (0.0, *RESUME_DELAYS):
            await asyncio.sleep(delay)
            why = await self._read_stream(session, opened)
            if self._closing or self._ended.done() or why.startswith("refused"):
                break
        # A stream opened later for this session (loading it again) is a new one.
        self._last_event.pop(session, None)
        if session is None and not self._closing:
            self._end(f"{what} {why}")

    async def _read_stream(self, session: str | None, opened: asyncio.Future[None]) -> str:
        """Read one GET of the stream until it ends: how it did."""
        headers = {CONNECTION_ID: self.connection_id or ""}
        if session is not None:
            headers[SESSION_ID] = session
        if last := self._last_event.get(session):
            headers["Last-Event-ID"] = last
        timeout = httpx.Timeout(None, connect=CONNECT_TIMEOUT)
        # A TCP connection of its own for each stream: httpx reads an HTTP/2 connection for
        # one stream at a time, and a long-lived stream waiting for its next event kept the
        # others' events unread (a cancelled turn's answer came only with the next POST).
        http = _client(self.target, cleartext_http2=self._cleartext_http2)
        try:
            async with (
                http,
                aconnect_sse(
                    http, "GET", self.target.url, headers=headers, timeout=timeout
                ) as source,
            ):
                response = source.response
                if response.status_code != 200:
                    body = (await response.aread()).decode(errors="replace").strip()
                    refused = f"refused (HTTP {response.status_code}"
                    refused += f": {body.splitlines()[0][:200]})" if body else ")"
                    if not opened.done():
                        opened.set_exception(ConnectionRefusedError(refused))
                    return refused
                if not opened.done():
                    opened.set_result(None)
                await self._read_events(response, session)
        except httpx.HTTPError as error:
            if not opened.done():
                opened.set_exception(ConnectionResetError(_http_error(error)))
            return f"broke: {_http_error(error)}"
        return "was closed by the server"

    async def _read_events(self, response: httpx.Response, session: str | None) -> None:
        flowing = self._flowing
        async for event in EventSource(response).aiter_sse():
            if not event.data:
                continue  # a keep-alive
            if not flowing.is_set():
                await flowing.wait()
            await self._take(event.data.encode(), session)
            if event.id:
                self._last_event[session] = event.id

    async def _take(self, message: bytes, session: str | None) -> None:
        """One message from the server: requests remember their session (for our answer);
        the answer to `session/new` or `session/fork` waits for the new session's stream."""
        if b'"id"' in message:
            envelope = _envelope(message)
            if envelope.id is not None and envelope.method is not None and session is not None:
                self._asked_in[envelope.id] = session
            elif envelope.id is not None and self._opening.pop(envelope.id, None) is not None:
                opened = envelope.result.session_id if envelope.result is not None else None
                if opened:
                    with contextlib.suppress(ConnectionError):
                        await self._listen(opened)
        self._deliver([message])

    # -- the end ------------------------------------------------------------------------------

    async def close(self) -> None:
        """Say goodbye (`DELETE`), then close every stream."""
        self._closing = True
        if self.connection_id is not None and not self._ended.done():
            with contextlib.suppress(httpx.HTTPError):
                await self.http.delete(
                    self.target.url, headers={CONNECTION_ID: self.connection_id}, timeout=2.0
                )
        self._end("closed")
        for task in self._streams.values():
            task.cancel()
        await self.http.aclose()

    def _end(self, reason: str) -> None:
        if not self._ended.done():
            self._ended.set_result(reason)

    def _keep_cookies(self) -> None:
        self.target.cookies.update({c.name: c.value or "" for c in self.http.cookies.jar})


class _Connected(msgspec.Struct):
    connection_id: str | None = msgspec.field(default=None, name="connectionId")


class _InitializeAnswer(msgspec.Struct):
    result: _Connected | None = None


def _cleartext(target: RemoteTarget) -> bool:
    return target.url.startswith("http://")


def _client(target: RemoteTarget, *, cleartext_http2: bool) -> httpx.AsyncClient:
    """The HTTP client of one connection: HTTP/2 where TLS lets the server choose it (ALPN),
    and over plain `http://` when `cleartext_http2` (prior knowledge), else HTTP/1.1."""
    headers = target.request_headers(cookies=False)
    headers["User-Agent"] = f"acp-tui/{__version__}"
    return httpx.AsyncClient(
        http1=not (cleartext_http2 and _cleartext(target)),
        http2=True,
        verify=tls_context(),
        headers=headers,
        cookies=target.cookies,
        timeout=httpx.Timeout(POST_TIMEOUT, connect=CONNECT_TIMEOUT),
        follow_redirects=False,
        trust_env=False,
    )


def _connection_id(body: bytes) -> str | None:
    """The connection's id in the `initialize` result's body, where the RFD also puts it."""
    with contextlib.suppress(msgspec.DecodeError, ValueError):
        answer = msgspec.json.decode(body, type=_InitializeAnswer)
        return answer.result.connection_id if answer.result is not None else None
    return None


def _http_error(error: httpx.HTTPError) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
