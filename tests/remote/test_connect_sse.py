"""acp-tui's Streamable HTTP streams (`acp_tui.remote.streamable_http`), against a server on
127.0.0.1 that writes crafted HTTP/1.1: a stream that breaks is opened again saying the last
event it had (`Last-Event-ID`), so a server that keeps what it sent can send the rest."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from acp_tui.remote.client import RemoteAgent
from acp_tui.remote.target import RemoteTarget

INITIALIZED = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}


class Server:
    """Answers `initialize` naming connection `c1`; the connection's stream sends one event and
    breaks the first time, and sends one more and stays open each time after."""

    def __init__(self) -> None:
        self.gets: list[dict[str, str]] = []
        """The headers of each GET of the stream, in order."""
        self._handlers: list[asyncio.Future[object]] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.append(handler)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return
        if head.startswith(b"PRI * HTTP/2.0"):  # HTTP/2 prior knowledge: not spoken here
            writer.close()
            return
        method, *lines = head.decode().split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
        if method.startswith("POST"):
            await reader.readexactly(int(headers["content-length"]))
            body = json.dumps(INITIALIZED).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nAcp-Connection-Id: c1\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            await writer.drain()
            await reader.read()  # until the client lets the connection go
            return
        self.gets.append(headers)
        event = {"jsonrpc": "2.0", "method": f"event/{len(self.gets)}"}
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
            b"id: %d\ndata: %s\n\n" % (40 + len(self.gets), json.dumps(event).encode())
        )
        await writer.drain()
        if len(self.gets) == 1:
            writer.close()  # the stream breaks
        else:
            await reader.read()

    async def close(self) -> None:
        for handler in self._handlers:
            handler.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)


@asynccontextmanager
async def server() -> AsyncIterator[tuple[Server, str]]:
    fake = Server()
    listening = await asyncio.start_server(fake.serve, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield fake, f"http://127.0.0.1:{port}/acp"
    finally:
        await fake.close()
        listening.close()


async def test_a_stream_that_breaks_is_opened_again_saying_the_last_event_it_had() -> None:
    async with server() as (fake, url):
        agent = await RemoteAgent.connect(RemoteTarget(url))
        try:
            initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
            agent.stdin.write(json.dumps(initialize).encode() + b"\n")
            lines = [json.loads(await asyncio.wait_for(agent.stdout.readline(), 10)) for _ in "abc"]
        finally:
            await agent.close(grace=0.5)
    # The answer to `initialize` and the stream's events, in whichever order they came.
    assert sorted(str(line.get("method")) for line in lines) == ["None", "event/1", "event/2"]
    assert "last-event-id" not in fake.gets[0]
    assert fake.gets[1]["last-event-id"] == "41"
