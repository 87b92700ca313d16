"""acp-tui's reading of WebSocket frames (`acp_tui.remote.websocket`), against a server on
127.0.0.1 that writes crafted bytes after a real upgrade: messages cut across reads, split in
fragments, masked, pretty-printed over several lines, a ping answered with a pong, a message
over the limit, and the server's close said as it said it."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

from websockets.frames import Frame, Opcode

from acp_tui.remote.client import RemoteAgent
from acp_tui.remote.target import RemoteTarget

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Coroutine[Any, Any, None]]


@asynccontextmanager
async def server(script: Script) -> AsyncIterator[str]:
    """A server that upgrades the first request, then runs `script` on the connection."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        key = next(
            line.split(b":", 1)[1].strip()
            for line in request.split(b"\r\n")
            if line.lower().startswith(b"sec-websocket-key:")
        )
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
        writer.write(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n"
        )
        await script(reader, writer)

    listening = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield f"ws://127.0.0.1:{port}/acp"
    finally:
        listening.close()


def frame(opcode: Opcode, payload: bytes, *, fin: bool = True) -> bytes:
    return Frame(opcode, payload, fin=fin).serialize(mask=False)


async def lines_of(agent: RemoteAgent, count: int) -> list[bytes]:
    return [
        (await asyncio.wait_for(agent.stdout.readline(), 10)).rstrip(b"\n") for _ in range(count)
    ]


async def test_messages_cut_split_masked_or_pretty_come_as_one_line_each() -> None:
    one = b'{"jsonrpc":"2.0","method":"a","params":{"text":"x\\ny"}}'
    big = b'{"jsonrpc":"2.0","method":"b","params":{"text":"' + b"z" * 70_000 + b'"}}'
    pretty = b'{\n  "jsonrpc": "2.0",\n  "method": "c"\n}'

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = frame(Opcode.TEXT, one) + frame(Opcode.TEXT, big)
        for cut in range(0, len(data), 997):  # cut anywhere: in headers, in payloads
            writer.write(data[cut : cut + 997])
            await writer.drain()
        writer.write(frame(Opcode.TEXT, b'{"jsonrpc":', fin=False))
        writer.write(frame(Opcode.PING, b"mid-message"))  # a control frame between fragments
        writer.write(frame(Opcode.CONT, b'"2.0","method":"d"}'))
        writer.write(Frame(Opcode.TEXT, pretty).serialize(mask=True))
        await writer.drain()
        await reader.read(1 << 16)

    async with server(script) as url:
        agent = await RemoteAgent.connect(RemoteTarget(url))
        try:
            got = await lines_of(agent, 4)
        finally:
            await agent.close(grace=0.5)
    assert got == [one, big, b'{"jsonrpc":"2.0","method":"d"}', pretty.replace(b"\n", b" ")]


async def test_a_ping_is_answered_and_a_close_is_said_as_the_server_said_it() -> None:
    pong: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(frame(Opcode.PING, b"are you there"))
        await writer.drain()
        head = await reader.readexactly(2)
        masked = await reader.readexactly(4 + (head[1] & 0x7F))
        payload = bytes(b ^ masked[i % 4] for i, b in enumerate(masked[4:]))
        pong.set_result(Frame(Opcode(head[0] & 0x0F), payload))
        writer.write(frame(Opcode.CLOSE, (4000).to_bytes(2, "big") + b"going away for a bit"))
        await writer.drain()
        await reader.read(64)
        writer.close()

    async with server(script) as url:
        agent = await RemoteAgent.connect(RemoteTarget(url))
        answer = await asyncio.wait_for(pong, 10)
        assert (answer.opcode, answer.data) == (Opcode.PONG, b"are you there")
        assert await asyncio.wait_for(agent.stdout.read(), 10) == b""  # the end, as EOF
        assert await agent.wait() == 1
        assert agent.exit_description() == (
            f"the connection to {url} was lost: "
            "the server closed the WebSocket (4000: going away for a bit)"
        )


async def test_a_message_over_the_limit_ends_the_connection_saying_why() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(frame(Opcode.TEXT, b"x" * 5000))
        await writer.drain()
        await reader.read(64)

    async with server(script) as url:
        agent = await RemoteAgent.connect(RemoteTarget(url), max_message=4096)
        assert await asyncio.wait_for(agent.wait(), 10) == 1
        assert "a message of 5,000 bytes, more than acp-tui takes" in agent.exit_description()
        await agent.close(grace=0.5)
