"""How fast session updates go from an agent's stdout into acp-tui's session state.

A child process writes a 100k-line stream of realistic `session/update` notifications (message
and thought chunks, tool calls with diffs, tool-call updates, plans, usage) to a pipe. Three
readers take it, each run several times in this one process, interleaved, so that a noisy
machine slows them alike:

- raw pipe:   read and split lines, nothing else (the floor);
- acp-tui:    the real path: `Connection` framing + envelope decode, `AgentClient` routing,
              `decode_session_notification`, and the reducer applying each update;
- python SDK: the official SDK's way: `json.loads` per line and the pydantic
              `SessionNotification` model (decode only: the SDK has no reducer);
- acp-tui + live check: the real path with every line also handed to the live protocol check
              (`acp_tui.check.live`), as the TUI does, its validator already up (the steady
              state of a session in which a flood arrives: its start-up is timed by no one);
              its cost must stay under 10%.

Prints the medians (updates/s) and the ratios. Targets (issue 14): acp-tui >= 500k updates/s,
>= 4x the SDK, within 4x of the raw pipe; the live check costing under 10%.

Run: python bench/bench_protocol.py [--lines 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from acp.schema import SessionNotification

from acp_tui.check import live
from acp_tui.check.live import LiveCheck
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import Session
from acp_tui.transport.connection import READ_SIZE, Connection

SESSION = "sess_bench"


def realistic_stream(lines: int, seed: int = 7) -> bytes:
    """`lines` session/update notifications, in the proportions a coding agent sends them."""
    rng = random.Random(seed)
    vocabulary = ["the", "loop", "reads", "each", "item", "and", "prints", "it", "so", "we"]
    old = "\n".join(f"def f{i}(x):\n    return x + {i}" for i in range(40))
    new = old.replace("return x +", "return x -")
    out: list[bytes] = []
    tool = 0
    for n in range(lines):
        roll = rng.random()
        if roll < 0.62:
            text = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 8))) + " "
            update = {
                "sessionUpdate": "agent_message_chunk",
                "messageId": f"m{n // 200}",
                "content": {"type": "text", "text": text},
            }
        elif roll < 0.70:
            update = {
                "sessionUpdate": "agent_thought_chunk",
                "content": {"type": "text", "text": "considering the edge cases "},
            }
        elif roll < 0.75:
            tool += 1
            update = {
                "sessionUpdate": "tool_call",
                "toolCallId": f"call_{tool}",
                "title": f"Edit src/module_{tool}.py",
                "kind": "edit",
                "status": "pending",
                "locations": [{"path": f"/work/src/module_{tool}.py", "line": 12}],
                "content": [
                    {
                        "type": "diff",
                        "path": f"/work/src/module_{tool}.py",
                        "oldText": old,
                        "newText": new,
                    }
                ],
                "rawInput": {"path": f"src/module_{tool}.py", "edits": 3},
            }
        elif roll < 0.88:
            update = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": f"call_{max(tool, 1)}",
                "status": rng.choice(["in_progress", "completed"]),
            }
        elif roll < 0.93:
            update = {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": f"Step {i}", "priority": "medium", "status": "pending"}
                    for i in range(5)
                ],
            }
        else:
            update = {
                "sessionUpdate": "usage_update",
                "used": 1000 + n,
                "size": 200000,
                "cost": {"amount": n / 1e5, "currency": "USD"},
            }
        message = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": SESSION, "update": update},
        }
        out.append(json.dumps(message, separators=(",", ":")).encode())
    return b"\n".join(out) + b"\n"


async def spawn_writer(path: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        "cat", str(path), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )


async def line_batches(path: Path) -> AsyncIterator[list[bytes]]:
    """The lines the child writes, a pipe read at a time (the baselines' framing)."""
    process = await spawn_writer(path)
    assert process.stdout is not None
    partial = b""
    while chunk := await process.stdout.read(READ_SIZE):
        lines = (partial + chunk).split(b"\n")
        partial = lines.pop()
        yield lines
    await process.wait()


async def raw_pipe(path: Path) -> tuple[int, float]:
    start = time.perf_counter()
    count = 0
    async for lines in line_batches(path):
        count += sum(1 for line in lines if line)
    return count, time.perf_counter() - start


async def acp_tui_path(path: Path, live_check: LiveCheck | None = None) -> tuple[int, float]:
    start = time.perf_counter()
    process = await spawn_writer(path)
    assert process.stdout is not None and process.stdin is not None
    tap = live_check.feed if live_check is not None else None
    count = await read_updates(process.stdout, process.stdin, tap)
    await process.wait()
    return count, time.perf_counter() - start


async def read_updates(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    tap: Callable[[str, bytes | bytearray], None] | None = None,
) -> int:
    """The real path on an agent's pair of streams, until they end: `Connection`, routing
    by `AgentClient`, the reducer, and a listener; how many updates reached the client (the
    session's changes are fewer: chunks read together are joined, `join_chunks`)."""

    async def no_permissions(pending: Any) -> None:
        pending.cancel()

    client = AgentClient(
        [],
        ClientOptions(cwd=Path.cwd()),
        decide_permission=no_permissions,
    )
    session = client.sessions[SESSION] = Session(client, SESSION)
    count = changes = 0

    def changed(_session: Session, _change: Any) -> None:
        nonlocal changes
        changes += 1

    session.listeners.append(changed)
    typed = dict(client.typed_notifications)
    kind, handle = typed["session/update"]

    def counted(notifications: list[Any]) -> None:
        nonlocal count
        count += len(notifications)
        handle(notifications)

    typed["session/update"] = (kind, counted)
    await Connection(reader, writer, client, typed_notifications=typed, tap=tap).run()
    if not changes:
        raise SystemExit("no update changed the session")
    return count


async def acp_tui_live_check(path: Path) -> tuple[int, float]:
    live_check = await running_live_check()
    try:
        return await acp_tui_path(path, live_check)
    finally:
        await live_check.close()


async def running_live_check() -> LiveCheck:
    """A live check whose validator is up: it has reported a violation in a line given it."""
    live.START_DELAY = 0.0
    reported = asyncio.Event()
    live_check = LiveCheck(lambda problem: reported.set())
    initialize = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'
    live_check.feed("send", initialize + b"\n")
    answer = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'
    broken = b'{"jsonrpc":"2.0","method":"session/update","params":{"update":{}}}'
    live_check.feed("recv", answer + b"\n" + broken + b"\n")
    await asyncio.wait_for(reported.wait(), 30)
    return live_check


async def sdk_path(path: Path) -> tuple[int, float]:
    start = time.perf_counter()
    count = 0
    async for lines in line_batches(path):
        for line in lines:
            if line:
                message = json.loads(line)
                SessionNotification.model_validate(message["params"])
                count += 1
    return count, time.perf_counter() - start


async def timed(
    reader: Callable[[Path], Awaitable[tuple[int, float]]], path: Path, expected: int
) -> float:
    # Each run starts with the collector in the same state: a full collection of what earlier
    # runs left (this process holds the SDK's models too) lands in none of them by chance.
    gc.collect()
    count, elapsed = await reader(path)
    if count != expected:
        raise SystemExit(f"{reader.__name__} saw {count} updates, expected {expected}")
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    readers = {
        "raw pipe": raw_pipe,
        "acp-tui": acp_tui_path,
        "python SDK": sdk_path,
        "live check": acp_tui_live_check,
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stream.jsonl"
        data = realistic_stream(args.lines)
        path.write_bytes(data)
        print(f"stream: {args.lines:,} updates, {len(data) / 1e6:.1f} MB; {args.runs} runs each")
        rates: dict[str, list[float]] = {name: [] for name in readers}
        for _ in range(args.runs):
            for name, reader in readers.items():
                rates[name].append(asyncio.run(timed(reader, path, args.lines)))
    medians = {name: statistics.median(values) for name, values in rates.items()}
    for name, median in medians.items():
        print(f"{name:>11}: {median:>12,.0f} updates/s (median)")
    ours = medians["acp-tui"]
    print(f"acp-tui vs python SDK: {ours / medians['python SDK']:.1f}x faster (target >= 4x)")
    print(f"raw pipe vs acp-tui:   {medians['raw pipe'] / ours:.1f}x (target <= 4x)")
    print(f"acp-tui absolute:      {ours:,.0f} updates/s (target >= 500,000)")
    cost = 1 - medians["live check"] / ours
    print(f"live check costs:      {cost:.1%} of the protocol path (target < 10%)")
    sys.exit(0)


if __name__ == "__main__":
    main()
