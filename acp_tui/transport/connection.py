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
import contextlib
import json
import sys
from typing import Any

import msgspec
from msgspec import UNSET

from acp_tui.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ConnectionClosed,
    RpcError,
)
from acp_tui.transport.codec import (
    _UNREADABLE,
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

MAX_LINE_BYTES = 256 * 1024 * 1024
"""A line longer than this is dropped (and reported), not kept: far beyond any real diff,
short of what would exhaust memory."""


class Connection(Peer):
    """A `Peer` over a pair of byte streams: it frames the lines the peer writes and
    decodes each one (the state it reads with is made in `Peer.__init__`)."""

    # -- receiving ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Read and dispatch until the peer closes its end; then fail what is still pending."""
        partial: list[bytes] = []
        partial_size = 0
        dropping = False  # the rest of an oversized line is skipped up to its newline
        try:
            while chunk := await self._reader.read(READ_SIZE):
                end = chunk.rfind(b"\n") + 1
                if not end:  # no line ends in this piece
                    if dropping:
                        continue
                    # A long line arrives in pieces: join once, when its end is seen.
                    partial.append(chunk)
                    partial_size += len(chunk)
                    if partial_size > MAX_LINE_BYTES:
                        self._problem(f"dropped a line of over {MAX_LINE_BYTES:,} bytes")
                        partial, partial_size, dropping = [], 0, True
                    continue
                lines = chunk[:end]
                if dropping:
                    lines = lines[lines.index(b"\n") + 1 :]
                    dropping = False
                elif partial:
                    lines = b"".join([*partial, lines])
                rest = chunk[end:]
                partial, partial_size = ([rest], len(rest)) if rest else ([], 0)
                self._receive_run(lines)
                if self._transcript is not None:
                    self._transcript.flush()
            if partial:
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
        if self._on_traffic is not None or self._transcript is not None:
            lines = _lines_of(run)
            if len(lines) != len(decoded):  # blank lines among them: each line on its own
                self._receive_lines(lines)
                return
            for line, typed in zip(lines, decoded, strict=True):
                self._take_typed(line, typed)
            return
        # Inline, not `_take_typed`: one call fewer an update, on the path of every flood.
        handlers = self._typed_handlers
        for typed in decoded:
            try:
                handlers[type(typed)](typed.params)
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
            self._typed_handlers[type(typed)](typed.params)
        except Exception as exc:  # a bad notification must never stop the stream
            self._problem(f"could not handle a notification: {exc!r}")

    def _receive_line(self, line: bytes) -> None:
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
            line.decode()
        except _UNREADABLE as exc:
            self._receive_undecodable(line, exc)
            return
        if self._transcript is not None:
            self._transcript.record("recv", line)
        self._dispatch(message, line)

    def _receive_undecodable(self, line: bytes, exc: Exception) -> None:
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

    def _receive_bad_text(self, line: bytes, value: Any) -> None:
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

    def _receive_batch(self, line: bytes) -> None:
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
