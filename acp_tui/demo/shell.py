"""Commands the demo agent runs itself, and the three ways a client gets to see them.

In v1 an agent may ask the client to run a command (`terminal/*`, the `run` scenario). When it
runs one itself instead, what the client sees depends on what it can show:

- v2: a display terminal of the agent's own (`terminal_update`, `terminal_output_chunk`s).
- v1, to a client that advertised `clientCapabilities._meta.terminal_output_delta` (or
  `terminal_output`): a terminal streamed through tool call `_meta`, as claude-agent-acp's Bash
  tool does (`terminal_info` on the tool call, output to append, then `terminal_exit`).
- v1 otherwise: the output as text content of the tool call, once the command has ended.

`run` drives the command and the tool call the same way for all three; a `Display` sends what
each one needs.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import sys
from typing import Any

from acp_tui.demo.turn import Cancelled, ToolCall, Turn
from acp_tui.demo.wire import (
    terminal_chunk,
    terminal_exit_meta,
    terminal_info_meta,
    terminal_output_meta,
    terminal_transcript,
    terminal_update,
    text_block,
)

SNAPSHOT_LIMIT = 64 * 1024
"""v2: the final `terminal_update` repeats the output up to this size (else only the exit)."""


def tool_fields(turn: Turn, item: dict[str, Any]) -> dict[str, Any]:
    """What the tool call that runs terminal `item` carries from the start (`Turn.tool`'s
    keywords): over v1 `_meta`, the terminal it shows (`terminal_info`)."""
    if turn.v2 or turn.peer.terminal_meta is None:
        return {}
    return {"content": [item], "meta": terminal_info_meta(item)}


async def run(turn: Turn, call: ToolCall, item: dict[str, Any]) -> dict[str, Any]:
    """Run `item["command"]` in `item["cwd"]`, show it as `call` goes, and fill in `item`'s
    output and exit status. The tool call ends `completed` on exit code 0, else `failed`; a
    cancel kills the command and raises `Cancelled` (the turn's wind-down closes the call)."""
    display = _display(turn, call, item)
    await display.start()
    try:
        process = await asyncio.create_subprocess_shell(
            item["command"],
            cwd=item["cwd"],
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=sys.platform != "win32",
        )
    except OSError as exc:
        item["output"] = f"cannot start: {exc}\n"
        item["exitCode"] = 127
        await display.end(item["output"].encode(), status="failed", raw_output={"error": str(exc)})
        return item
    assert process.stdout is not None
    output = bytearray()
    code: int | None = None
    try:
        while chunk := await turn.race(process.stdout.read(4096)):
            output += chunk
            await display.output(chunk)
        code = await turn.race(process.wait())
    except Cancelled:
        pass
    finally:
        # However else the turn ends (the client gone, the agent shutting down), the command
        # must not outlive it: in a session of its own, no signal sent to us reaches it.
        if process.returncode is None:
            await _terminate(process)
        item["output"] = output.decode("utf-8", errors="replace")
    if code is None:  # cancelled
        item["signal"] = "SIGTERM"
        await display.end(bytes(output))
        raise Cancelled
    if code < 0:
        item["signal"] = signal.Signals(-code).name
    else:
        item["exitCode"] = code
    status = "completed" if code == 0 else "failed"
    await display.end(bytes(output), status=status, raw_output={"exitCode": item["exitCode"]})
    return item


class Display:
    """v1 with nothing better: the output as text once the command has ended."""

    def __init__(self, turn: Turn, call: ToolCall, item: dict[str, Any]) -> None:
        self.turn = turn
        self.call = call
        self.item = item

    async def start(self) -> None:
        await self.call.update(status="in_progress")

    async def output(self, data: bytes) -> None:
        """Some more output, as it comes."""

    async def end(self, output: bytes, **fields: Any) -> None:
        """The command has ended (`item` holds its exit status, `output` all of it); `fields`
        end the tool call (none after a cancel)."""
        await self.call.update(content=[text_block(terminal_transcript(self.item))], **fields)


class DisplayTerminal(Display):
    """v2: a display terminal, its output streamed as base64 `terminal_output_chunk`s."""

    async def start(self) -> None:
        await self.call.update(status="in_progress", content=[self.item])
        await self.turn.update(terminal_update(self.item))

    async def output(self, data: bytes) -> None:
        await self.turn.update(terminal_chunk(self.item, data))

    async def end(self, output: bytes, **fields: Any) -> None:
        if fields and len(output) <= SNAPSHOT_LIMIT:
            # A final snapshot replaces what the chunks built up: the same bytes, but it shows
            # clients the snapshot path (and is what a replay sends).
            await self.turn.update(terminal_update(self.item, output=output))
        else:
            await self.turn.update(terminal_update(self.item, exit_only=True))
        if fields:
            await self.call.update(**fields)


class MetaTerminal(Display):
    """v1 with `_meta.terminal_output(_delta)`: output streamed in tool call `_meta`, as text
    (decoded across chunk boundaries), and the exit status with the tool call's end."""

    def __init__(self, turn: Turn, call: ToolCall, item: dict[str, Any], key: str) -> None:
        super().__init__(turn, call, item)
        self.key = key
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    async def output(self, data: bytes) -> None:
        if text := self.decoder.decode(data):
            await self.call.update(meta=terminal_output_meta(self.item, self.key, text))

    async def end(self, output: bytes, **fields: Any) -> None:
        meta = terminal_exit_meta(self.item)
        if rest := self.decoder.decode(b"", final=True):
            meta = terminal_output_meta(self.item, self.key, rest) | meta
        await self.call.update(meta=meta, **fields)


def _display(turn: Turn, call: ToolCall, item: dict[str, Any]) -> Display:
    if turn.v2:
        return DisplayTerminal(turn, call, item)
    if turn.peer.terminal_meta is not None:
        return MetaTerminal(turn, call, item, turn.peer.terminal_meta)
    return Display(turn, call, item)


async def _terminate(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the command's process group, then SIGKILL it if it lingers."""
    for sig in (signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            if sys.platform == "win32":
                process.kill()
            else:
                os.killpg(process.pid, sig)
        try:
            await asyncio.wait_for(process.wait(), 1.0)
            return
        except TimeoutError:
            continue
