"""The live protocol check: every message an agent sends, checked against the schema of the
version it negotiated, while the conversation goes on.

Checking costs far more than reading (a JSON Schema walk against a few µs of msgspec), so it
happens in another process, `python -m acp_tui.check.validator`, and the conversation's event
loop only hands lines over: `feed` takes them a read at a time (`Connection`'s `tap`) and
appends them to a batch, written to the validator's stdin every `FLUSH_SECONDS`. Each read's
run of lines goes as it came, after a header line `R <bytes>` (the agent's) or `S <bytes>`
(ours): the event loop neither splits nor copies it, the validator does the rest. While lines
pour in (a flood, a session's replay) the batch waits for a pause of `FLUSH_SECONDS`, up to
`MAX_HOLD`: checking competes for the machine, and is better done just after. The validator
reports each violation as a JSON line, which `on_violation` hears. Nothing it finds changes
what the user sees of the conversation. When the validator falls `MAX_BACKLOG` bytes behind (a
flood of updates), further lines are counted as unchecked rather than queued without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable

FLUSH_SECONDS = 0.05
MAX_HOLD = 1.0
"""Seconds lines may wait for a pause in the stream before they go to the validator anyway."""
START_DELAY = 1.0
"""The validator starts this long after the first line (the lines wait in the batch): its
start-up (Python, jsonschema, the schema) must not compete with the app's own first frames."""
MAX_BACKLOG = 4 << 20
"""Bytes handed to the validator and not yet taken by it, beyond which lines go unchecked (said
once). They are held in memory meanwhile: at 16 MB the backlog of a long flood was ~200 bytes
of every streamed chunk, most of what the app held above 1 KB a chunk over an 80,000-chunk
answer (bench/README.md, "Long answers (issue 29)"); 4 MB is still ~16,000 lines of a flood,
every kind of message in it checked many times over."""
_TAGS = {"send": b"S", "recv": b"R"}


class LiveCheck:
    def __init__(
        self,
        on_violation: Callable[[str], None],
        on_behind: Callable[[str], None] | None = None,
    ) -> None:
        self.on_violation = on_violation
        self.on_behind = on_behind
        """Told once when lines start going unchecked."""
        self.violations = 0
        self.unchecked = 0
        self._batch: list[bytes] = []
        self._batch_bytes = 0
        self._process: asyncio.subprocess.Process | None = None
        self._starting: asyncio.Task[None] | None = None
        self._flush: asyncio.TimerHandle | None = None
        self._held_since = 0.0
        """When the batch began waiting (loop time)."""
        self._fed_at = 0.0
        """When the last lines came (loop time)."""
        self._reader: asyncio.Task[None] | None = None
        self._closed = False
        self._spawning = False

    def feed(self, direction: str, lines: bytes | bytearray) -> None:
        """Hand over wire lines ("send" or "recv"): a run of them, each ending in a newline,
        or one line of over a megabyte without its newline, which goes unchecked (validating
        a big write would cost the validator far more than it tells)."""
        tag = _TAGS.get(direction)
        if tag is None or self._closed or not lines:
            return
        if not lines.endswith(b"\n"):
            self.unchecked += 1
            return
        if self._batch_bytes > MAX_BACKLOG:
            if not self.unchecked and self.on_behind is not None:
                self.on_behind(
                    f"the live protocol check fell behind a flood of messages: lines past a "
                    f"{MAX_BACKLOG >> 20} MB backlog go unchecked"
                )
            self.unchecked += lines.count(b"\n")
            return
        self._batch += (b"%s %d\n" % (tag, len(lines)), lines)
        self._batch_bytes += len(lines)
        loop = asyncio.get_running_loop()
        self._fed_at = loop.time()
        if self._flush is None:
            self._held_since = self._fed_at
            self._flush = loop.call_later(FLUSH_SECONDS, self._write)
            if self._starting is None:
                self._starting = loop.create_task(self._start())

    async def close(self) -> None:
        self._closed = True
        if self._flush is not None:
            self._flush.cancel()
        if self._starting is not None:
            if self._process is None and not self._spawning:
                self._starting.cancel()  # still waiting out START_DELAY: nothing to stop
            with contextlib.suppress(asyncio.CancelledError):
                await self._starting  # a validator being started is stopped too, not left behind
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
        if self._reader is not None:
            self._reader.cancel()

    async def finish(self, timeout: float) -> None:
        """Check what is left before closing, waiting at most `timeout` for the validator:
        headless, a run's last messages are checked too (and the validator is started at once
        if the run was too short for it to have started)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                if self._process is None and self._batch:
                    if self._starting is not None and not self._spawning:
                        self._starting.cancel()
                        self._starting = None
                    if self._starting is None:
                        self._starting = asyncio.ensure_future(self._start(delay=0))
                    await self._starting
                process = self._process
                if process is not None and process.stdin is not None and not self._closed:
                    if self._flush is not None:
                        self._flush.cancel()
                    self._fed_at = self._held_since = -MAX_HOLD  # nothing pours any more
                    self._write()
                    process.stdin.close()
                    if self._reader is not None:
                        await self._reader  # to the validator's last word
        await self.close()

    async def _start(self, delay: float = START_DELAY) -> None:
        await asyncio.sleep(delay)
        self._spawning = True
        try:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "acp_tui.check.validator",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
            )
        except OSError as error:
            self._closed = True
            self.on_violation(f"the live protocol check could not start: {error}")
            return
        self._reader = asyncio.get_running_loop().create_task(self._read())
        if self._batch and self._flush is None:
            self._write()  # what came while it started

    def _write(self) -> None:
        self._flush = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        process = self._process
        pouring = now - self._fed_at < FLUSH_SECONDS and now - self._held_since < MAX_HOLD
        if process is None or process.stdin is None:
            return  # still starting: `_start` writes what waits once the worker is up
        if pouring:
            if not self._closed:  # lines still pouring in: a little later
                self._flush = loop.call_later(FLUSH_SECONDS, self._write)
            return
        batch, self._batch = self._batch, []
        transport = process.stdin.transport
        try:
            for piece in batch:  # not joined: what the pipe takes at once is never copied
                process.stdin.write(piece)
        except (ConnectionError, RuntimeError):
            self._closed = True
            return
        # What the validator has not taken yet still counts against the backlog.
        self._batch_bytes = transport.get_write_buffer_size()

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        while line := await self._process.stdout.readline():
            try:
                problem = json.loads(line)["problem"]
            except (ValueError, KeyError, TypeError):
                continue
            self.violations += 1
            self.on_violation(str(problem))
