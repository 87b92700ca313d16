"""How fast session updates reach acp-tui's session state from a remote agent over the
WebSocket profile, next to the same stream from a local agent's stdout.

Both readers take bench_protocol's 100k realistic `session/update` notifications into the
real path (`Connection` framing and decode, `AgentClient` routing, the reducer), run several
times in this one process, interleaved, so that a noisy machine slows them alike:

- stdio:     a child process (`cat`) writes the lines to a pipe, as a local agent does;
- websocket: a child process serves them on 127.0.0.1 as WebSocket text frames, one message
             a frame as the RFD says, to `RemoteAgent` (the reader and writer `Connection`
             takes). The server writes frames encoded ahead, with one blocking `sendall` after
             the upgrade, so that it costs next to nothing, as `cat` does: what is measured is
             the client.

Prints the medians (updates/s) and their ratio. Target (issue 32): websocket >= 0.5x stdio.

Run: python bench/bench_remote.py [--lines 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench_protocol import acp_tui_path, read_updates, realistic_stream, timed

from acp_tui.remote.client import RemoteAgent
from acp_tui.remote.target import RemoteTarget

SERVER = r"""
import base64, hashlib, socket, sys

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame(payload):
    size = len(payload)
    if size < 126:
        head = bytes([0x81, size])
    elif size < 65536:
        head = bytes([0x81, 126]) + size.to_bytes(2, "big")
    else:
        head = bytes([0x81, 127]) + size.to_bytes(8, "big")
    return head + payload


with open(sys.argv[1], "rb") as stream:
    frames = b"".join(frame(line) for line in stream.read().splitlines() if line)
listener = socket.create_server(("127.0.0.1", 0))
print(listener.getsockname()[1], flush=True)
while True:
    connection, _ = listener.accept()
    request = b""
    while b"\r\n\r\n" not in request:
        request += connection.recv(4096)
    key = next(
        line.split(b":", 1)[1].strip()
        for line in request.split(b"\r\n")
        if line.lower().startswith(b"sec-websocket-key:")
    )
    accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
    connection.sendall(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
    )
    # Like `cat`: the kernel copies it out as fast as the client reads (a blocking sendall).
    connection.sendall(frames + bytes([0x88, 2]) + (1000).to_bytes(2, "big"))
    connection.recv(64)  # the client's close frame: the server closes TCP first
    connection.close()
"""


def websocket_reader(url: str) -> Callable[[Path], Awaitable[tuple[int, float]]]:
    """The stream from the server at `url` (which serves the file itself), timed."""

    async def websocket(_path: Path) -> tuple[int, float]:
        start = time.perf_counter()
        agent = await RemoteAgent.connect(RemoteTarget(url))
        count = await read_updates(agent.stdout, agent.stdin)
        elapsed = time.perf_counter() - start
        await agent.close()
        return count, elapsed

    return websocket


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stream.jsonl"
        data = realistic_stream(args.lines)
        path.write_bytes(data)
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(path)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert server.stdout is not None
            url = f"ws://127.0.0.1:{server.stdout.readline().strip()}/acp"
            print(
                f"stream: {args.lines:,} updates, {len(data) / 1e6:.1f} MB; {args.runs} runs each"
            )
            readers = {"stdio": acp_tui_path, "websocket": websocket_reader(url)}
            rates: dict[str, list[float]] = {name: [] for name in readers}
            for _ in range(args.runs):
                for name, reader in readers.items():
                    rates[name].append(asyncio.run(timed(reader, path, args.lines)))
        finally:
            server.kill()
            server.wait()
    medians = {name: statistics.median(values) for name, values in rates.items()}
    for name, median in medians.items():
        print(f"{name:>9}: {median:>12,.0f} updates/s (median)")
    ratio = medians["websocket"] / medians["stdio"]
    print(f"websocket vs stdio: {ratio:.2f}x (target >= 0.5x)")


if __name__ == "__main__":
    main()
