"""Where headless mode writes: stdout in bursts, quietly stopping when nobody reads."""

from __future__ import annotations

import asyncio
import io
import os
import select
from collections.abc import Callable
from typing import Any, TextIO

import msgspec


class Output:
    """Where the printers write. What is written in one go of the event loop (a read's worth
    of updates, a flood's) goes out in one write, at the end of it: one system call per burst
    instead of one per change. When the reader goes away (`acp-tui -p … | head`), writing
    stops quietly and `on_closed` runs, once: the run ends as a program killed by SIGPIPE.

    jsonl's JSON comes encoded from msgspec (`write_bytes`), or as events to encode a burst
    at a time, in one call for all of them (`write_event`: only for events nothing changes
    after, as they are encoded later); text (`write`) is encoded a burst at a time too."""

    def __init__(self, stream: TextIO, on_closed: Callable[[], None]) -> None:
        self._stream = stream
        self._on_closed = on_closed
        self._pending: list[bytes] = []
        self._text: list[str] = []
        """Text written since the last event, encoded when an event follows or at the flush."""
        self._events: list[Any] = []
        """Events written since the last text, encoded when text follows or at the flush."""
        self._encode_lines = msgspec.json.Encoder().encode_lines
        self.closed = False

    def write(self, text: str) -> None:
        if self.closed:
            return
        if self._events:
            self._encode_events()
        elif not (self._text or self._pending):
            asyncio.get_running_loop().call_soon(self.flush)
        self._text.append(text)

    def write_event(self, event: Any) -> None:
        """An object msgspec encodes as JSON, on a line of its own, encoded later: nothing in
        it may change meanwhile."""
        if self.closed:
            return
        if self._text:
            self._encode_text()
        elif not (self._events or self._pending):
            asyncio.get_running_loop().call_soon(self.flush)
        self._events.append(event)

    def write_bytes(self, data: bytes) -> None:
        if self.closed:
            return
        if self._text:
            self._encode_text()
        elif self._events:
            self._encode_events()
        elif not self._pending:
            asyncio.get_running_loop().call_soon(self.flush)
        self._pending.append(data)

    def _encode_text(self) -> None:
        stream = self._stream
        text = "".join(self._text)
        self._text.clear()
        self._pending.append(text.encode(stream.encoding or "utf-8", stream.errors or "strict"))

    def _encode_events(self) -> None:
        # Taken first: an event that fails to encode must not fail every later flush too.
        events, self._events = self._events, []
        self._pending.append(self._encode_lines(events))

    def flush(self) -> None:
        """Write out what is pending now (a warning is about to go to stderr, or the end)."""
        if self._text:
            self._encode_text()
        elif self._events:
            self._encode_events()
        if not self._pending or self.closed:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        try:
            _write_all(self._stream, data)
        except BrokenPipeError:
            self.closed = True
            _discard_output(self._stream)
            self._on_closed()


def _write_all(stream: TextIO, data: bytes) -> None:
    """Write `data` whole. An unbuffered stdout (`python -u`, PYTHONUNBUFFERED) hands a write
    to one system call, which a signal can cut short on a pipe, and `TextIOWrapper` drops the
    rest: so its raw file is written until all of it is out."""
    stream.flush()
    raw = getattr(stream, "buffer", None)
    if not isinstance(raw, io.RawIOBase | io.BufferedIOBase):  # a text-only stream
        stream.write(data.decode(stream.encoding or "utf-8", stream.errors or "strict"))
        stream.flush()
        return
    if isinstance(raw, io.BufferedIOBase):
        raw.write(data)
        raw.flush()
        return
    view = memoryview(data)
    while view:
        written = raw.write(view)
        if written is None:  # a non-blocking file, full: wait until it takes more
            select.select([], [raw], [])
            continue
        view = view[written:]


def _discard_output(stream: TextIO) -> None:
    """Point `stream`'s file at /dev/null, so that Python's own flush at exit does not fail
    on the closed pipe too."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
