"""A JSON Lines record of every message on the wire, both ways, flushed as it goes.

Each line is `{"dir": "send"|"recv", "ts": <unix seconds>, "msg": <the message>}`. A line that
was not JSON is kept as `{"dir": "recv", "ts": …, "msg": null, "raw": "<text>", "error": "…"}`.
Valid messages are spliced in as the bytes that crossed the wire, so recording costs one write,
not a re-encode. If the file cannot be written (disk full, permissions) the recorder says so once
through `on_error` and stops recording; the session goes on.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import msgspec

_HEADS = {direction: b'{"dir":"%s","ts":' % direction.encode() for direction in ("send", "recv")}


class Transcript:
    def __init__(self, path: Path, on_error: Callable[[str], None] | None = None) -> None:
        self.path = path
        self._on_error = on_error
        self._file: IO[bytes] | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("ab")
        except OSError as exc:
            self._fail(exc)

    def record(self, direction: str, line: bytes | bytearray) -> None:
        """Record one message exactly as sent or received (`line` is valid JSON, no newline)."""
        self._write(b'%s%.6f,"msg":%s}\n' % (_HEADS[direction], time.time(), line))

    def record_unparsed(self, line: bytes | bytearray, error: str) -> None:
        """Record a received line that was not a JSON-RPC message, for the user to see."""
        text = line.decode("utf-8", errors="replace")
        extra = msgspec.json.encode({"raw": text, "error": error})
        self._write(b'%s%.6f,"msg":null,%s\n' % (_HEADS["recv"], time.time(), extra[1:]))

    def flush(self) -> None:
        """Push what was recorded to the file; the connection calls this after each read and
        each send, so a crash loses nothing that was seen."""
        if self._file is None:
            return
        try:
            self._file.flush()
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        self.flush()
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, data: bytes) -> None:
        if self._file is None:
            return
        try:
            self._file.write(data)
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
        self._file = None
        if self._on_error is not None:
            reason = exc.strerror or exc
            self._on_error(f"transcript {self.path} not writable ({reason}); recording stopped")
