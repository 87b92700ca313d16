"""A JSON-RPC 2.0 peer over a pair of byte streams, one message per line.

The connection frames lines of any length, decodes each one once into an envelope, matches
responses to our requests, runs the peer's requests through a `Handler` (each in its own task,
each answered with a result or an error), and passes notifications on in order. Bad input never
stops the stream: it is recorded, reported through `on_problem`, and answered where JSON-RPC
says an answer is due. It knows nothing of ACP sessions; both acp-tui and its demo agent use it.

The connection is in three parts: `codec` (the envelopes, encoded and decoded), `peer`
(sending, and what is done with each message once decoded) and this module (reading: lines
framed and decoded, bad input taken apart).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import re
import sys
from itertools import groupby
from typing import Any

import msgspec
from msgspec import UNSET

from acp_tui.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ConnectionClosed,
    RequestId,
    RpcError,
)
from acp_tui.text import human_size
from acp_tui.transport.codec import (
    _UNREADABLE,
    Line,
    _decode_any,
    _decode_incoming,
    _error_line,
    _lines_of,
    _preview,
    _repair_text,
)
from acp_tui.transport.peer import Peer

READ_SIZE = 1 << 18
"""Bytes asked of the pipe per read: large enough that a burst of small updates is framed in
bulk, small enough to keep latency low."""

MAX_LINE_BYTES = 64 * 1024 * 1024
"""By default, a line longer than this is dropped as it streams (and reported, and answered
with an error if it was a request), never held whole: far beyond any real diff, short of what
would exhaust memory (`max_line` in the config)."""

_KEPT_OF_DROPPED = 1 << 16
"""How much of each end of a dropped line is kept: enough to find a request's method and id,
which may come before or after its params."""

_VALIDATED_AT_ONCE = 1 << 20
"""A longer line's UTF-8 is checked in pieces of this size: no copy of it as text."""

_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
_METHOD = re.compile(rb'"method"\s*:\s*"([^"\\]{1,200})"')
_PARAMS = re.compile(rb'"(?:params|result|error)"\s*:')
_LAST_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*}\s*$')


class Connection(Peer):
    """A `Peer` over a pair of byte streams: it frames the lines the peer writes and
    decodes each one (the state it reads with is made in `Peer.__init__`)."""

    max_line = MAX_LINE_BYTES
    """The longest line taken; set on an instance to change it."""

    # -- receiving ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Read and dispatch until the peer closes its end; then fail what is still pending."""
        partial: list[bytes] = []  # the start of a line, in the pieces it came in
        partial_size = 0
        long: bytearray | None = None  # a long line's start: grown in place, never joined
        dropped: _Dropped | None = None  # an oversized line, skipped up to its newline
        try:
            while chunk := await self._reader.read(READ_SIZE):
                first = chunk.find(b"\n") + 1
                if not first:  # no line ends in this piece
                    if dropped is not None:
                        dropped.add(chunk)
                    elif long is not None:
                        long += chunk
                        if len(long) > self.max_line:
                            dropped, long = _Dropped.of(long), None
                    else:
                        partial.append(chunk)
                        partial_size += len(chunk)
                        if partial_size > _VALIDATED_AT_ONCE:
                            long = bytearray().join(partial)
                            partial, partial_size = [], 0
                    continue
                if dropped is not None:
                    dropped.add(chunk[: first - 1])
                    self._refuse_dropped(dropped)
                    dropped, chunk = None, chunk[first:]
                elif long is not None:
                    long += chunk[: first - 1]
                    chunk = chunk[first:]
                    if len(long) > self.max_line:
                        self._refuse_dropped(_Dropped.of(long))
                    else:
                        self._receive_long(long)
                    long = None
                elif partial:
                    # A line that two reads cut: with the lines after it, as one run.
                    chunk = b"".join([*partial, chunk])
                    partial, partial_size = [], 0
                end = chunk.rfind(b"\n") + 1
                if end:
                    self._receive_run(chunk[:end])
                rest = chunk[end:]
                partial, partial_size = ([rest], len(rest)) if rest else ([], 0)
                if self._transcript is not None:
                    self._transcript.flush()
            if dropped is not None:
                self._refuse_dropped(dropped)
            elif long is not None:
                self._receive_long(long)
            elif partial:
                line = b"".join(partial)
                if self._tap is not None:
                    self._tap("recv", line + b"\n")
                self._receive_line(line)
        finally:
            reason = ConnectionClosed()
            if self._explain_eof is not None:
                reason = ConnectionClosed(await self._explain_eof())
            self._close(reason)
            if self._transcript is not None:
                self._transcript.flush()

    def _receive_run(self, run: bytes) -> None:
        """The hot path: a run of whole lines (each ending in a newline), as one read brought
        them. In a stream of typed notifications the run is decoded in one call, and each
        notification handed on right here; any other line in it sends the run line by line."""
        if self._tap is not None:
            self._tap("recv", run)
        decoded = None
        if self._decode_typed_lines is not None:
            with contextlib.suppress(*_UNREADABLE):
                decoded = self._decode_typed_lines(run)
        if decoded is None:
            self._receive_lines(_lines_of(run))
            return
        on_traffic, transcript = self._on_traffic, self._transcript
        if on_traffic is not None or transcript is not None:
            lines = _lines_of(run)
            if len(lines) != len(decoded):  # blank lines among them: each line on its own
                self._receive_lines(lines)
                return
            # All of them shown and recorded before any is handled: they came before anything
            # a handler may send. Then handed on a run at a time, as without them.
            for line in lines:
                if on_traffic is not None:
                    on_traffic("recv", line)
                if transcript is not None:
                    transcript.record("recv", line)
        # A handler call a run of each method, not one an update: on the path of every flood
        # (the chunks of a run are joined: `join_chunks`).
        handlers = self._typed_handlers
        for kind, typed in groupby(decoded, type):
            try:
                handlers[kind]([each.params for each in typed])
            except Exception as exc:  # a bad notification must never stop the stream
                self._problem(f"could not handle a notification: {exc!r}")

    def _receive_lines(self, lines: list[bytes]) -> None:
        """Lines one by one: typed notifications are decoded and handed on right here; every
        other line takes `_receive_line`."""
        decode = self._decode_typed
        for line in lines:
            if decode is None:
                self._receive_line(line)
                continue
            try:
                typed = decode(line)
            except _UNREADABLE:
                self._receive_line(line)
                continue
            self._take_typed(line, typed)

    def _take_typed(self, line: bytes, typed: Any) -> None:
        """A typed notification as read: shown (inspector), recorded (transcript), handed on."""
        if self._on_traffic is not None:
            self._on_traffic("recv", line)
        if self._transcript is not None:
            self._transcript.record("recv", line)
        try:
            self._typed_handlers[type(typed)]([typed.params])
        except Exception as exc:  # a bad notification must never stop the stream
            self._problem(f"could not handle a notification: {exc!r}")

    def _receive_long(self, line: bytearray) -> None:
        """A line of over a megabyte, read into one growing buffer: taken as it is (decoded
        messages hold views of it), never copied whole, the tap's copy included."""
        if self._tap is not None:
            self._tap("recv", line)
        self._receive_line(line)

    def _refuse_dropped(self, dropped: _Dropped) -> None:
        """An oversized line was skipped: said, recorded, and answered if it was a request."""
        method, request_id = dropped.method_and_id()
        what = f"a message of {human_size(dropped.size)}"
        if method is not None:
            what += f" ({method})"
        limit = f"more than acp-tui takes ({human_size(self.max_line)}, `max_line` in its config)"
        self._problem(f"dropped {what} from the agent: {limit}")
        if self._transcript is not None:
            self._transcript.record_unparsed(dropped.head[:_KEPT_OF_DROPPED], f"dropped: {limit}")
        if method is not None and request_id is not None:
            error = RpcError(INVALID_REQUEST, f"Invalid request: the message is {limit}")
            self._spawn(self._send_error(request_id, error))

    def _receive_line(self, line: bytes | bytearray) -> None:
        if line[:1].isspace() or line[-1:].isspace():  # rare: a long line is not copied
            line = line.strip()
        if not line:
            return
        if self._on_traffic is not None:
            self._on_traffic("recv", line)
        if line[0] == 0x5B:  # "[": a v2 batch
            self._receive_batch(line)
            return
        try:
            message = _decode_incoming(line)
            # `params` and `result` stay raw, unchecked: bad UTF-8 in them would surface
            # later, in whoever decodes them; take the line apart here instead.
            _check_utf8(line)
        except _UNREADABLE as exc:
            self._receive_undecodable(line, exc)
            return
        if self._transcript is not None:
            self._transcript.record("recv", line)
        self._dispatch(message, line)

    def _receive_undecodable(self, line: Line, exc: Exception) -> None:
        what = "not JSON"
        try:
            value = _decode_any(line)
        except RecursionError:
            # Maybe valid JSON, but nested deeper than any parser here goes: unreadable.
            value, what = UNSET, "JSON nested too deeply to read"
        except ValueError:
            value = _repair_text(line)
            if value is not UNSET:
                self._receive_bad_text(line, value)
                return
        if value is UNSET:
            reason = f"not JSON: {exc}" if what == "not JSON" else what
            if self._transcript is not None:
                self._transcript.record_unparsed(line, reason)
            self._problem(f"agent wrote a line that is {what}: {_preview(line)}")
            if line[:1] == b"{":
                # It meant to be a message; JSON-RPC asks for an answer. Plain log lines get
                # none, and "[INFO] ..." is far likelier a log line than a broken batch.
                self._spawn(self._send_error(None, RpcError(PARSE_ERROR, "Parse error")))
            return
        if self._transcript is not None:
            self._transcript.record("recv", line)
        request_id = value.get("id") if isinstance(value, dict) else None
        if not isinstance(request_id, int | str):
            request_id = None
        self._problem(f"agent sent JSON that is not a JSON-RPC message ({exc}): {_preview(line)}")
        if isinstance(value, dict) and "method" in value and "id" in value:
            error = RpcError(INVALID_REQUEST, f"Invalid request: {exc}")
            self._spawn(self._send_error(request_id, error))
        elif isinstance(value, dict) and ("result" in value or "error" in value):
            # A malformed answer to a request we are waiting on: fail that request rather
            # than wait for ever for an answer that already came.
            entry = self._pending_entry(request_id)
            if entry is not None and not entry[0].done():
                message = f"the agent answered {entry[1]} with a malformed response: {exc}"
                entry[0].set_exception(RpcError(INTERNAL_ERROR, message))

    def _receive_bad_text(self, line: Line, value: Any) -> None:
        """JSON whose text is not valid Unicode (bad UTF-8, lone surrogates). A request gets
        an error naming the problem; anything else is taken with the bad text replaced."""
        reason = "text that is not valid UTF-8"
        if self._transcript is not None:
            self._transcript.record_unparsed(line, reason)
        self._problem(f"agent sent {reason}: {_preview(line)}")
        if not isinstance(value, dict):
            return
        if "method" in value and "id" in value:
            request_id = value["id"] if isinstance(value["id"], int | str) else None
            error = RpcError(INVALID_PARAMS, f"Invalid params: the request has {reason}")
            self._spawn(self._send_error(request_id, error))
            return
        with contextlib.suppress(*_UNREADABLE):
            repaired = json.dumps(value, ensure_ascii=False).encode("utf-8", "replace")
            self._dispatch(_decode_incoming(repaired), repaired)

    def _receive_batch(self, line: Line) -> None:
        try:
            entries = msgspec.json.decode(line, type=list[msgspec.Raw])
        except _UNREADABLE as exc:
            self._receive_undecodable(line, exc)
            return
        if self._transcript is not None:
            self._transcript.record("recv", line)
        if not entries:
            self._problem("agent sent an empty batch")
            self._spawn(self._send_error(None, RpcError(INVALID_REQUEST, "Empty batch")))
            return
        invalid: list[bytes] = []
        serving: list[asyncio.Task[bytes]] = []
        for entry in entries:
            raw = bytes(entry)
            try:
                message = _decode_incoming(raw)
            except _UNREADABLE as exc:
                self._problem(f"batch entry is not a JSON-RPC message ({exc}): {_preview(raw)}")
                invalid.append(
                    _error_line(None, RpcError(INVALID_REQUEST, f"Invalid request: {exc}"))
                )
                continue
            if message.is_request:
                serving.append(self._serve(message.id, message.method, message.params))  # type: ignore[arg-type]
            else:
                self._dispatch(message, raw)
        if invalid or serving:  # an all-notification batch gets no answer at all
            self._spawn(self._answer_batch(invalid, serving))


def _check_utf8(line: Line) -> None:
    """Raise `UnicodeDecodeError` unless `line` is UTF-8; a long one is checked in pieces,
    never decoded whole."""
    if len(line) <= _VALIDATED_AT_ONCE:
        line.decode()
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(line)
    for start in range(0, len(line), _VALIDATED_AT_ONCE):
        decoder.decode(view[start : start + _VALIDATED_AT_ONCE])
    decoder.decode(b"", final=True)


class _Dropped:
    """What is kept of a line too long to take: its size, its first and last bytes."""

    def __init__(self) -> None:
        self.size = 0
        self.head = b""
        self.tail = b""

    @classmethod
    def of(cls, start: bytes | bytearray) -> _Dropped:
        dropped = cls()
        dropped.add(start)
        return dropped

    def add(self, piece: bytes | bytearray) -> None:
        self.size += len(piece)
        if len(self.head) < _KEPT_OF_DROPPED:
            self.head += piece[: _KEPT_OF_DROPPED - len(self.head)]
        self.tail = (self.tail + piece[-_KEPT_OF_DROPPED:])[-_KEPT_OF_DROPPED:]

    def method_and_id(self) -> tuple[str | None, RequestId]:
        """The method and the id of the message, where they can be found in its ends: before
        its params (as most peers write them), or the id last."""
        head = self.head
        params = _PARAMS.search(head)
        before = head[: params.start()] if params else head
        method = _METHOD.search(before)
        found = _ID.search(before) or _LAST_ID.search(self.tail)
        request_id: RequestId = None
        if found is not None:
            with contextlib.suppress(ValueError):
                request_id = json.loads(found[1])
        return (method[1].decode("utf-8", "replace") if method else None), request_id


async def open_stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """This process's own stdin and stdout as asyncio streams, for an agent serving on them."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout.buffer
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return reader, writer
