"""A JSON-RPC 2.0 peer over a pair of byte streams, one message per line.

The connection frames lines of any length, decodes each one once into an envelope, matches
responses to our requests, runs the peer's requests through a `Handler` (each in its own task,
each answered with a result or an error), and passes notifications on in order. Bad input never
stops the stream: it is recorded, reported through `on_problem`, and answered where JSON-RPC
says an answer is due. It knows nothing of ACP sessions; both acp-tui and its demo agent use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, NoReturn, Protocol, TypeVar, Union

import msgspec
from msgspec import UNSET, UnsetType

from acp_tui.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    ConnectionClosed,
    ErrorObject,
    Incoming,
    RequestId,
    RpcError,
)
from acp_tui.transport.transcript import Transcript

T = TypeVar("T")

READ_SIZE = 1 << 18
"""Bytes asked of the pipe per read: large enough that a burst of small updates is framed in
bulk, small enough to keep latency low."""

MAX_LINE_BYTES = 256 * 1024 * 1024
"""A line longer than this is dropped (and reported), not kept: far beyond any real diff,
short of what would exhaust memory."""

CANCEL_REQUEST = "$/cancel_request"
_WITHDRAWN_KEPT = 1000
"""Withdrawn request ids remembered, for peers that never answer them."""


class _CancelRequest(msgspec.Struct, rename="camel"):
    request_id: RequestId


_decode_incoming = msgspec.json.Decoder(Incoming).decode
_decode_any = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode
_result_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}
_UNREADABLE = (ValueError, RecursionError)
"""What decoding a hostile line raises: `msgspec.DecodeError` and `UnicodeDecodeError` (bad
UTF-8 inside a string) are both `ValueError`s; JSON nested too deeply is a `RecursionError`."""


class Handler(Protocol):
    """What a connection asks of the program behind it."""

    async def handle_request(self, method: str, params: msgspec.Raw) -> Any:
        """Answer one request from the peer; raise `RpcError` to answer with an error."""
        ...

    def handle_notification(self, method: str, params: msgspec.Raw) -> None:
        """Take one notification; called in arrival order, so it must not block."""
        ...


TypedNotifications = Mapping[str, tuple[Any, Callable[[Any], None]]]
"""Notifications a handler wants decoded straight into a type, by method: the hot path of a
stream of updates decodes each line once, into its final type, instead of twice."""


def _typed_decoder(
    typed: TypedNotifications,
) -> tuple[msgspec.json.Decoder[Any] | None, dict[type, Callable[[Any], None]]]:
    """A decoder for a tagged union on `method` of the given notifications, and the handler
    of each variant. The decoder fails on anything else (a request, a response, a notification
    with an `id`, params it cannot read), and the line then takes the general path."""
    handlers: dict[type, Callable[[Any], None]] = {}
    for index, (method, (params_type, handle)) in enumerate(typed.items()):
        fields = [("params", params_type), ("id", UnsetType, UNSET)]
        variant = msgspec.defstruct(
            f"_Typed{index}", fields, tag_field="method", tag=method, gc=False
        )
        handlers[variant] = handle
    if not handlers:
        return None, handlers
    variants = tuple(handlers)
    union = variants[0] if len(variants) == 1 else Union[variants]  # noqa: UP007
    return msgspec.json.Decoder(union), handlers


class _Request(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any = UNSET


class _Notification(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    method: str
    params: Any = UNSET


class _Result(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    result: Any


class _Error(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    error: ErrorObject


def _result_decoder(result_type: Any) -> msgspec.json.Decoder[Any]:
    decoder = _result_decoders.get(result_type)
    if decoder is None:
        decoder = _result_decoders[result_type] = msgspec.json.Decoder(result_type)
    return decoder


class Connection:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        handler: Handler,
        *,
        transcript: Transcript | None = None,
        on_problem: Callable[[str], None] | None = None,
        on_traffic: Callable[[str, bytes], None] | None = None,
        tap: Callable[[str, bytes], None] | None = None,
        typed_notifications: TypedNotifications | None = None,
        explain_eof: Callable[[], Awaitable[str]] | None = None,
    ) -> None:
        """`on_problem` hears of every line or message that could not be taken as it came;
        `on_traffic` sees every line both ways ("send"/"recv"), for a protocol inspector;
        `tap` gets the same lines in bulk (a read's worth at a time, as one run of lines each
        ending in a newline), for consumers that must cost next to nothing per line (the live
        protocol check); `explain_eof` says why the
        peer went away (e.g. its exit status), for the requests
        still waiting on it."""
        self._explain_eof = explain_eof
        typed_decoder, self._typed_handlers = _typed_decoder(typed_notifications or {})
        self._decode_typed = typed_decoder.decode if typed_decoder else None
        self._decode_typed_lines = typed_decoder.decode_lines if typed_decoder else None
        self._reader = reader
        self._writer = writer
        self._handler = handler
        self._transcript = transcript
        self._on_problem = on_problem
        self._on_traffic = on_traffic
        self._tap = tap
        self._next_id = 0
        self._pending: dict[RequestId, tuple[asyncio.Future[msgspec.Raw], str]] = {}
        self._withdrawn: dict[RequestId, str] = {}
        """Our requests withdrawn with `$/cancel_request`, by id: their late answers are due
        (the peer MUST answer), expected, and dropped."""
        self._serving: dict[RequestId, asyncio.Task[None]] = {}
        """The peer's requests being answered, by id: what its `$/cancel_request` stops."""
        self._stopped: set[asyncio.Task[None]] = set()
        """Tasks of requests the peer withdrew (other cancellations are shutdowns)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed: ConnectionClosed | None = None

    @property
    def closed(self) -> bool:
        return self._closed is not None

    # -- sending ------------------------------------------------------------------------------

    async def request(self, method: str, params: Any, result_type: type[T] = msgspec.Raw) -> T:
        """Send a request and wait for its answer, decoded as `result_type`."""
        if self._closed is not None:
            raise self._closed
        request_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[msgspec.Raw] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (future, method)
        try:
            await self._send(_encode(_Request("2.0", request_id, method, params)))
            raw = await future
        except asyncio.CancelledError:
            # Abandoned (a timeout, the user moved on): tell the peer to stop working on it.
            # (Our cancel reached the future too, unless its answer came first.)
            if future.cancelled() and self._closed is None:
                self._withdraw(request_id, method)
            raise
        finally:
            self._pending.pop(request_id, None)
            if future.done() and not future.cancelled():
                future.exception()  # a failed send never reads it; asyncio would complain
        if result_type is msgspec.Raw:
            return raw  # type: ignore[return-value]
        try:
            return _result_decoder(result_type).decode(raw)
        except msgspec.DecodeError as exc:
            raise RpcError(INTERNAL_ERROR, f"unexpected {method} result: {exc}") from exc

    async def notify(self, method: str, params: Any) -> None:
        await self._send(_encode(_Notification("2.0", method, params)))

    def _withdraw(self, request_id: RequestId, method: str) -> None:
        if len(self._withdrawn) >= _WITHDRAWN_KEPT:
            del self._withdrawn[next(iter(self._withdrawn))]
        self._withdrawn[request_id] = method
        self._spawn(self._notify_quietly(CANCEL_REQUEST, _CancelRequest(request_id)))

    async def _notify_quietly(self, method: str, params: Any) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.notify(method, params)

    async def _send(self, line: bytes) -> None:
        if self._closed is not None:
            raise self._closed
        try:
            if self._writer.is_closing():
                # asyncio drops what is written to a closing pipe without a word.
                raise ConnectionResetError("the agent's input is closed")
            self._writer.write(line + b"\n")
        except (ConnectionError, RuntimeError) as exc:
            # RuntimeError: the transport was already closed under us (the agent is being
            # stopped). The line never left, so the transcript does not say it was sent.
            await self._write_failed(exc)
        if self._transcript is not None:
            self._transcript.record("send", line)
            self._transcript.flush()
        if self._on_traffic is not None:
            self._on_traffic("send", line)
        if self._tap is not None:
            self._tap("send", line + b"\n")
        try:
            await self._writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            await self._write_failed(exc)

    async def _write_failed(self, exc: Exception) -> NoReturn:
        # An agent that died usually fails our write before its end of stdout is read: say
        # how it ended.
        reason = f"cannot write to the agent: {exc}"
        if self._explain_eof is not None:
            reason = await self._explain_eof()
        closed = ConnectionClosed(reason)
        self._close(closed)
        raise closed from exc

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

    async def _answer_batch(self, invalid: list[bytes], serving: list[asyncio.Task[bytes]]) -> None:
        """The answers to a batch's entries, as one array once each request is served: JSON-RPC
        2.0's batch rule, which ACP v2 follows."""
        answers = [*invalid, *await asyncio.gather(*serving)]
        with contextlib.suppress(ConnectionClosed):
            await self._send(b"[" + b",".join(answers) + b"]")

    def _dispatch(self, message: Incoming, line: bytes) -> None:
        if message.is_notification and message.method == CANCEL_REQUEST:
            self._cancel_serving(message.params)  # type: ignore[arg-type]
        elif message.is_notification:
            try:
                self._handler.handle_notification(message.method, message.params)  # type: ignore[arg-type]
            except Exception as exc:  # a bad notification must never stop the stream
                self._problem(f"could not handle {message.method}: {exc!r}")
        elif message.is_request:
            self._spawn(self._answer(self._serve(message.id, message.method, message.params)))  # type: ignore[arg-type]
        elif message.is_response:
            self._resolve(message, line)
        else:
            self._problem(f"agent sent an object that is not a JSON-RPC message: {_preview(line)}")
            entry = self._pending_entry(message.id) if message.id is not UNSET else None  # type: ignore[arg-type]
            if entry is not None and not entry[0].done():
                # An answer with neither result nor error: fail the request it answers, so
                # nothing waits for ever. (Answering it would put our error in their id space.)
                error = RpcError(INTERNAL_ERROR, f"the agent answered {entry[1]} with nothing")
                entry[0].set_exception(error)

    def _cancel_serving(self, params: msgspec.Raw | UnsetType) -> None:
        """The peer withdrew one of its requests: stop serving it (its handler sees
        `CancelledError`; `_answer` sends the -32800 the spec requires)."""
        try:
            request_id = msgspec.json.decode(params or b"null", type=_CancelRequest).request_id
        except msgspec.DecodeError as exc:
            self._problem(f"unreadable {CANCEL_REQUEST}: {exc}")
            return
        task = self._serving.get(request_id)
        if task is None and isinstance(request_id, int):
            task = self._serving.get(str(request_id))
        if task is not None:
            self._stopped.add(task)
            task.cancel()

    def _resolve(self, message: Incoming, line: bytes) -> None:
        if message.id in self._withdrawn and message.id not in self._pending:
            del self._withdrawn[message.id]  # type: ignore[arg-type]
            return  # the answer to a request we withdrew: due, and no longer wanted
        entry = self._pending_entry(message.id)  # type: ignore[arg-type]
        if entry is None or entry[0].done():
            self._problem(f"agent answered a request we never sent or had: {_preview(line)}")
            return
        future, _method = entry
        if message.error is not UNSET:
            future.set_exception(RpcError.from_object(message.error))  # type: ignore[arg-type]
        else:
            future.set_result(message.result)

    def _pending_entry(
        self, request_id: RequestId
    ) -> tuple[asyncio.Future[msgspec.Raw], str] | None:
        """Our request this id answers; agents that echo ids as strings are forgiven."""
        entry = self._pending.get(request_id)
        if entry is None and isinstance(request_id, str) and request_id.isdigit():
            entry = self._pending.get(int(request_id))
        return entry

    def _serve(
        self, request_id: RequestId, method: str, params: msgspec.Raw
    ) -> asyncio.Task[bytes]:
        """Serve one of the peer's requests: a task making the line that answers it, known by
        its id until done (so that `$/cancel_request` can stop it)."""
        task = self._spawn(self._response(request_id, method, params))
        self._serving[request_id] = task
        task.add_done_callback(lambda _task, key=request_id: self._serving.pop(key, None))
        return task

    async def _answer(self, serving: asyncio.Task[bytes]) -> None:
        line = await serving
        with contextlib.suppress(ConnectionClosed):
            await self._send(line)

    async def _response(self, request_id: RequestId, method: str, params: msgspec.Raw) -> bytes:
        """The line that answers a request: its result, or the error it came to."""
        try:
            result = await self._handler.handle_request(method, params)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            withdrawn = task in self._stopped
            self._stopped.discard(task)  # type: ignore[arg-type]
            if not withdrawn or self._closed is not None:
                raise
            # The peer withdrew the request ($/cancel_request): it still gets its answer.
            return _error_line(request_id, RpcError(REQUEST_CANCELLED, "Request cancelled"))
        except RpcError as error:
            return _error_line(request_id, error)
        except Exception as exc:
            self._problem(f"failed to answer {method}: {exc!r}")
            return _error_line(request_id, RpcError(INTERNAL_ERROR, f"Internal error: {exc}"))
        try:
            return _encode(_Result("2.0", request_id, result))
        except (TypeError, ValueError) as exc:
            self._problem(f"cannot encode the answer to {method}: {exc!r}")
            return _error_line(request_id, RpcError(INTERNAL_ERROR, f"Internal error: {exc}"))

    async def _send_error(self, request_id: RequestId, error: RpcError) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self._send(_error_line(request_id, error))

    # -- plumbing -----------------------------------------------------------------------------

    def _spawn(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _problem(self, message: str) -> None:
        if self._on_problem is not None:
            self._on_problem(message)

    def _close(self, reason: ConnectionClosed) -> None:
        if self._closed is None:
            self._closed = reason
        for future, _method in self._pending.values():
            if not future.done():
                future.set_exception(reason)


def _error_line(request_id: RequestId, error: RpcError) -> bytes:
    return _encode(_Error("2.0", request_id, error.to_object()))


def _lines_of(run: bytes) -> list[bytes]:
    """The lines of a run of whole lines, without their newlines."""
    lines = run.split(b"\n")
    lines.pop()  # what follows the last newline: nothing
    return lines


def _repair_text(line: bytes) -> Any:
    """The JSON value of a line whose only fault is its text encoding, or UNSET."""
    try:
        return json.loads(line.decode("utf-8", errors="replace"))
    except _UNREADABLE:
        return UNSET


def _preview(line: bytes, limit: int = 200) -> str:
    text = line[:limit].decode("utf-8", errors="replace")
    return text + (f"… ({len(line):,} bytes)" if len(line) > limit else "")


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
