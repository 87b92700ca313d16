"""`acp-tui serve`: a local stdio agent at `/acp`, over the RFD's two profiles, served by
hypercorn (HTTP/1.1, HTTP/2 by TLS's ALPN or with prior knowledge, WebSocket) in this process.

The application is bare ASGI: `Route` sends each request to its profile (`serve_ws`,
`serve_http`); `Endpoint` holds the connections, one agent process each. Paths: `/acp` (the
RFD's one endpoint); `/acp/ws`, the same WebSocket, where acpremote's clients look for it;
`/acp/NAME`, Streamable HTTP for a connection the client names by its path instead of
`Acp-Connection-Id` (acp-http-client's shape: one SSE stream carries everything).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import signal
import socket
from collections.abc import Callable
from pathlib import Path

from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.config import Config

from acp_tui.protocol.jsonrpc import INVALID_REQUEST
from acp_tui.remote.serve_endpoint import Endpoint, Receive, Scope, Send, ServeOptions, respond
from acp_tui.remote.serve_http import handle_http
from acp_tui.remote.serve_ws import handle_websocket

PATH = "/acp"
_NAMED = re.compile(r"/acp/([A-Za-z0-9._~-]{1,128})")
SHUTDOWN_GRACE = 3.0
"""Seconds hypercorn gives requests still open to finish once the agents are stopped."""


class ServeError(Exception):
    """The server cannot listen as asked."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve anywhere


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host:port` (port 0: any free one)."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as error:
        raise ServeError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as error:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    return sock


class Route:
    """The ASGI application."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        path = scope["path"].rstrip("/") or "/"
        named = _NAMED.fullmatch(path)
        if path != PATH and named is None:
            await respond(send, scope, 404, INVALID_REQUEST, f"nothing at {path}: ACP is at {PATH}")
        elif not self.endpoint.authorized(scope):
            await respond(send, scope, 401, INVALID_REQUEST, "a valid bearer token is needed")
        elif scope["type"] == "websocket" and path in (PATH, f"{PATH}/ws"):
            await handle_websocket(self.endpoint, scope, receive, send)
        elif scope["type"] == "websocket":
            await respond(send, scope, 404, INVALID_REQUEST, f"no WebSocket at {path}")
        else:
            await handle_http(self.endpoint, scope, receive, send, named[1] if named else None)


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        event = await receive()
        if event["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif event["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def run_server(
    options: ServeOptions,
    sock: socket.socket,
    log: Callable[[str], None],
    tls: tuple[Path, Path] | None = None,
) -> None:
    """Serve on `sock` (with TLS: a certificate chain and its key) until SIGINT or SIGTERM;
    then stop every agent (their process groups) before the server stops."""
    endpoint = Endpoint(options, log)
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]
    if tls is not None:
        config.certfile, config.keyfile = map(str, tls)
    config.websocket_max_message_size = options.max_message
    config.graceful_timeout = SHUTDOWN_GRACE
    config.accesslog = None
    config.errorlog = logging.getLogger("acp_tui.serve")
    logging.getLogger("acp_tui.serve").setLevel(logging.ERROR)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    async def shutdown() -> None:
        await stop.wait()
        log("stopping: every agent is closed")
        # A request still being read when hypercorn gives up on it fails in hypercorn's own
        # shutdown (0.18): said in a line, not a traceback.
        loop.set_exception_handler(lambda _, context: log(f"cut short: {context['message']}"))
        await endpoint.close()

    try:
        await hypercorn_serve(Route(endpoint), config, shutdown_trigger=shutdown)  # type: ignore[arg-type]
    except Exception as error:
        if not stop.is_set():
            raise
        log(f"a request was cut short: {error!r}")
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
