"""The JSON-RPC 2.0 peer behind a `Connection`: what it sends, and what it does with each
message once read and decoded.

It sends requests (each awaited, and withdrawn with `$/cancel_request` when abandoned) and
notifications, matches responses to our requests, runs the peer's requests through a
`Handler` (each in its own task, each answered with a result or an error, stopped by the
peer's `$/cancel_request`), and passes notifications on. Reading the lines is `Connection`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, NoReturn, Protocol, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from acp_tui.protocol.jsonrpc import (
    INTERNAL_ERROR,
    REQUEST_CANCELLED,
    ConnectionClosed,
    Incoming,
    RequestId,
    RpcError,
)
from acp_tui.transport.codec import (
    CANCEL_REQUEST,
    Line,
    TypedNotifications,
    _CancelRequest,
    _encode,
    _error_line,
    _Notification,
    _preview,
    _Request,
    _Result,
    _result_decoder,
    _typed_decoder,
)
from acp_tui.transport.transcript import Transcript

T = TypeVar("T")

_WITHDRAWN_KEPT = 1000
"""Withdrawn request ids remembered, for peers that never answer them."""


class Handler(Protocol):
    """What a connection asks of the program behind it."""

    async def handle_request(self, method: str, params: msgspec.Raw) -> Any:
        """Answer one request from the peer; raise `RpcError` to answer with an error."""
        ...

    def handle_notification(self, method: str, params: msgspec.Raw) -> None:
        """Take one notification; called in arrival order, so it must not block."""
        ...


class Peer:
    """One end of a JSON-RPC conversation: sending, answers matched, requests served.
    `Connection` adds the reading."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        handler: Handler,
        *,
        transcript: Transcript | None = None,
        on_problem: Callable[[str], None] | None = None,
        on_traffic: Callable[[str, Line], None] | None = None,
        tap: Callable[[str, Line], None] | None = None,
        typed_notifications: TypedNotifications | None = None,
        explain_eof: Callable[[], Awaitable[str]] | None = None,
    ) -> None:
        """`on_problem` hears of every line or message that could not be taken as it came;
        `on_traffic` sees every line both ways ("send"/"recv"), for a protocol inspector;
        `tap` gets the same lines in bulk (a read's worth at a time, as one run of lines each
        ending in a newline; a line of over a megabyte alone, without its newline, not
        copied), for consumers that must cost next to nothing per line (the live protocol
        check); `explain_eof` says why the
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
        self._serving: dict[RequestId, asyncio.Task[bytes]] = {}
        """The peer's requests being answered, by id: what its `$/cancel_request` stops."""
        self._stopped: set[asyncio.Task[Any]] = set()
        """Tasks of requests the peer withdrew (other cancellations are shutdowns)."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed: ConnectionClosed | None = None

    @property
    def closed(self) -> bool:
        return self._closed is not None

    # -- sending ------------------------------------------------------------------------------

    async def request(self, method: str, params: Any, result_type: Any = msgspec.Raw) -> Any:
        """Send a request and wait for its answer, decoded as `result_type` (a type, or a
        union of types: `msgspec.Raw` by default)."""
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
            return raw
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

    async def _answer_batch(self, invalid: list[bytes], serving: list[asyncio.Task[bytes]]) -> None:
        """The answers to a batch's entries, as one array once each request is served: JSON-RPC
        2.0's batch rule, which ACP v2 follows."""
        answers = [*invalid, *await asyncio.gather(*serving)]
        with contextlib.suppress(ConnectionClosed):
            await self._send(b"[" + b",".join(answers) + b"]")

    def _dispatch(self, message: Incoming, line: Line) -> None:
        if message.is_notification and message.method == CANCEL_REQUEST:
            self._cancel_serving(message.params)
        elif message.is_notification:  # so it has a method (a notification with an `id` has not)
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
            entry = self._pending_entry(message.id) if message.id is not UNSET else None
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

    def _resolve(self, message: Incoming, line: Line) -> None:
        if message.id in self._withdrawn and message.id not in self._pending:
            del self._withdrawn[message.id]
            return  # the answer to a request we withdrew: due, and no longer wanted
        entry = self._pending_entry(message.id)  # type: ignore[arg-type]
        if entry is None or entry[0].done():
            self._problem(f"agent answered a request we never sent or had: {_preview(line)}")
            return
        future, _method = entry
        if message.error is not UNSET:
            future.set_exception(RpcError.from_object(message.error))
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
        task.add_done_callback(functools.partial(self._served, request_id))
        return task

    def _served(self, request_id: RequestId, _task: asyncio.Task[bytes]) -> None:
        self._serving.pop(request_id, None)

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
            self._stopped.discard(task)
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
