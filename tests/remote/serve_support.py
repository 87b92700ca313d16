"""A real `acp-tui serve` for the tests: started as a user would, on 127.0.0.1 and a free port,
in front of the demo agent (no delays but `slow`'s real seconds), with its log read as it comes;
and small clients of both profiles that speak JSON-RPC through it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from ssl import SSLContext
from typing import Any

import httpx
from httpx_sse import aconnect_sse
from websockets.asyncio.client import ClientConnection, connect

DEMO = [sys.executable, "-m", "acp_tui.demo", "--speed", "0", "--no-persist"]
TOKEN = "ACP_TUI_TOKEN"
_BANNER = re.compile(r"at https?://([\d.]+):(\d+)/acp")


class Served:
    """`acp-tui serve ARGS -- AGENT` in a process of its own; its stderr, line by line."""

    def __init__(
        self,
        home: Path,
        *args: str,
        agent: list[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        inherited = {name: value for name, value in os.environ.items() if name != TOKEN}
        full_env = {
            **inherited,
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            **(env or {}),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "acp_tui", "serve", *args, "--", *(agent or DEMO)],
            cwd=home,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.log: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.port = 0

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def wait_for(self, pattern: str, timeout: float = 30) -> str:
        """The first line of the log from here on that matches `pattern`."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no line like {pattern!r} in {self.log}") from None
            if line is None:
                raise AssertionError(f"serve ended without {pattern!r}: {self.log}")
            self.log.append(line)
            if re.search(pattern, line):
                return line

    def start(self) -> Served:
        banner = _BANNER.search(self.wait_for(r"serving "))
        assert banner is not None
        self.port = int(banner[2])
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/acp"

    def stop(self) -> int:
        """SIGTERM, as a service manager stops it; its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


@contextlib.contextmanager
def served(home: Path, *args: str, **kwargs: Any) -> Iterator[Served]:
    server = Served(home, "--listen", "127.0.0.1:0", *args, **kwargs)
    try:
        yield server.start()
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def initialize(request_id: int = 1) -> dict[str, Any]:
    return request(
        request_id,
        "initialize",
        {"protocolVersion": 1, "clientCapabilities": {"fs": {}, "terminal": False}},
    )


def request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def prompt(request_id: int, session_id: str, text: str) -> dict[str, Any]:
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    return request(request_id, "session/prompt", params)


def text_of(messages: list[dict[str, Any]]) -> str:
    """The agent's message chunks, joined."""
    return "".join(
        m["params"]["update"]["content"].get("text", "")
        for m in messages
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )


class WebSocketClient:
    """A client of the WebSocket profile: messages in, every message out kept in order."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.received: list[dict[str, Any]] = []

    @property
    def connection_id(self) -> str:
        assert self.socket.response is not None
        value: str = self.socket.response.headers["Acp-Connection-Id"]
        return value

    async def send(self, message: dict[str, Any]) -> None:
        await self.socket.send(json.dumps(message))

    async def until(self, condition: Any, timeout: float = 30) -> dict[str, Any]:
        """Read until a message for which `condition(message)` holds; that message."""
        async with asyncio.timeout(timeout):
            while True:
                message = json.loads(await self.socket.recv())
                self.received.append(message)
                if condition(message):
                    return message

    async def call(self, message: dict[str, Any]) -> dict[str, Any]:
        await self.send(message)
        return await self.until(lambda m: m.get("id") == message["id"] and "method" not in m)


@contextlib.asynccontextmanager
async def websocket(
    url: str, ssl: SSLContext | None = None, **headers: str
) -> AsyncIterator[WebSocketClient]:
    ws_url = url.replace("http://", "ws://")
    async with connect(ws_url, additional_headers=headers, max_size=None, ssl=ssl) as socket:
        yield WebSocketClient(socket)


class HttpClient:
    """A client of the Streamable HTTP profile over HTTP/2 (prior knowledge, as on loopback
    without TLS): POSTs, and SSE streams read into lists in the background."""

    def __init__(self, url: str, client: httpx.AsyncClient) -> None:
        self.url = url
        self.client = client
        self.connection_id = ""
        self.streams: dict[str | None, list[dict[str, Any]]] = {}
        self.event_ids: dict[str | None, list[str]] = {}
        """Each stream's events' ids, in order."""
        self._readers: dict[str | None, asyncio.Task[None]] = {}
        self._arrived = asyncio.Event()

    def headers(self, session: str | None = None) -> dict[str, str]:
        headers = {"Acp-Connection-Id": self.connection_id} if self.connection_id else {}
        return headers | ({"Acp-Session-Id": session} if session else {})

    async def post(self, message: dict[str, Any], session: str | None = None) -> httpx.Response:
        return await self.client.post(self.url, json=message, headers=self.headers(session))

    async def initialize(self) -> dict[str, Any]:
        response = await self.post(initialize())
        assert response.status_code == 200, response.text
        self.connection_id = response.headers["Acp-Connection-Id"]
        answer: dict[str, Any] = response.json()
        return answer

    async def open_stream(self, session: str | None = None, last_event_id: str = "") -> None:
        """Open the connection's SSE stream, or a session's; return once it is open."""
        opened = asyncio.Event()
        self.streams.setdefault(session, [])
        self.event_ids.setdefault(session, [])
        headers = self.headers(session) | {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        self._readers[session] = asyncio.create_task(self._read(session, headers, opened))
        await opened.wait()

    async def _read(
        self, session: str | None, headers: dict[str, str], opened: asyncio.Event
    ) -> None:
        # A TCP connection of its own, as acp-tui's client does: httpx reads an HTTP/2
        # connection for one stream at a time, and a stream waiting for its next event kept
        # another stream's events unread (a turn's answer seen 30 s late, or never).
        own = httpx.AsyncClient(
            http1=False, http2=True, headers=self.client.headers, cookies=self.client.cookies
        )
        async with own, aconnect_sse(own, "GET", self.url, headers=headers, timeout=None) as source:
            assert source.response.status_code == 200, await source.response.aread()
            opened.set()
            async for event in source.aiter_sse():
                self.streams[session].append(json.loads(event.data))
                self.event_ids[session].append(event.id)
                self._arrived.set()

    async def reader_done(self, session: str | None = None) -> None:
        """Until a stream's response ends (the server ended it)."""
        await self._readers[session]

    def close_stream(self, session: str | None = None) -> None:
        self._readers.pop(session).cancel()

    async def until(
        self, condition: Any, session: str | None = None, timeout: float = 30
    ) -> dict[str, Any]:
        """Wait for a message on a stream for which `condition(message)` holds."""
        async with asyncio.timeout(timeout):
            while True:
                for message in self.streams.get(session, []):
                    if condition(message):
                        return message
                self._arrived.clear()
                await self._arrived.wait()

    async def answer(self, request_id: int, session: str | None = None) -> dict[str, Any]:
        return await self.until(lambda m: m.get("id") == request_id and "method" not in m, session)

    async def aclose(self) -> None:
        for reader in self._readers.values():
            reader.cancel()
        await asyncio.gather(*self._readers.values(), return_exceptions=True)


@contextlib.asynccontextmanager
async def http_client(url: str, **headers: str) -> AsyncIterator[HttpClient]:
    async with httpx.AsyncClient(http1=False, http2=True, headers=headers) as client:
        peer = HttpClient(url, client)
        try:
            yield peer
        finally:
            await peer.aclose()
