"""What `acp-tui serve` reads of a JSON-RPC message passing through it: enough to route it
(its id, method and session), never its meaning, and a clear error for anything it cannot
pass on (not JSON, a batch, not a JSON-RPC object).

A message goes on to the agent as one line of stdio: one whose JSON spans lines (pretty-printed
by a client) is made compact first, and every other one passes unchanged, byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import UNSET

from acp_tui.protocol.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorObject,
    Incoming,
    RequestId,
)

OPENS_A_SESSION = frozenset({"session/new", "session/load", "session/resume", "session/fork"})
"""Requests whose answer comes on the connection's stream, not a session's: the client has no
session stream for the session they open (RFD: "responses to `session/new` and
`session/load`"); `session/fork` and `session/resume` open one the same way."""

_decode = msgspec.json.Decoder(Incoming).decode
_decode_any = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


class _Scoped(msgspec.Struct, rename="camel"):
    session_id: str | None = None


_decode_scoped = msgspec.json.Decoder(_Scoped).decode

IdKey = tuple[bool, RequestId]
"""A request id as a key: `1` and `"1"` are different requests."""


class BadMessage(Exception):
    """A message that cannot go to the agent, with the HTTP status and JSON-RPC error that
    say why."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True, slots=True)
class Message:
    """One JSON-RPC message and what routing needs of it."""

    line: bytes
    """The message as one line, without its newline."""
    id: RequestId
    has_id: bool
    method: str | None
    session_id: str | None
    """`params.sessionId`, for a request or a notification that names one."""

    @property
    def is_request(self) -> bool:
        return self.method is not None and self.has_id

    @property
    def is_response(self) -> bool:
        return self.method is None and self.has_id

    @property
    def key(self) -> IdKey:
        return key_of(self.id)

    @property
    def answer_scope(self) -> str | None:
        """The session whose stream a response to this request goes on; None: the
        connection's."""
        return None if self.method in OPENS_A_SESSION else self.session_id


def key_of(request_id: RequestId) -> IdKey:
    return (isinstance(request_id, str), request_id)


def read_message(data: bytes) -> Message:
    """`data` (one JSON value) as a `Message`; `BadMessage` says what is wrong with it."""
    try:
        incoming = _decode(data)
    except msgspec.ValidationError:
        raise _not_an_object(data) from None
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as error:
        raise BadMessage(400, PARSE_ERROR, f"not JSON: {error}") from None
    if incoming.method is UNSET and incoming.id is UNSET:
        raise BadMessage(400, INVALID_REQUEST, "not a JSON-RPC message: no method and no id")
    line = data.strip()
    if b"\n" in line or b"\r" in line:
        line = _encode(_decode_any(line))
    method = incoming.method if isinstance(incoming.method, str) else None
    return Message(
        line=line,
        id=None if incoming.id is UNSET else incoming.id,
        has_id=incoming.id is not UNSET,
        method=method,
        session_id=_session_of(incoming.params) if method is not None else None,
    )


def read_agent_line(line: bytes) -> Message | None:
    """A line the agent wrote, as a `Message`; None when it is none (a stray line of output,
    which goes to the client as it is, as stdio would have carried it)."""
    try:
        return read_message(line)
    except BadMessage:
        return None


def with_connection_id(response: bytes, connection_id: str) -> bytes:
    """The `initialize` response with `connectionId` in its result, as the RFD shows it
    (`{ id: 1, result: { capabilities, connectionId } }`), besides the header."""
    try:
        value = _decode_any(response)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return response
    if not isinstance(value, dict) or not isinstance(value.get("result"), dict):
        return response
    value["result"]["connectionId"] = connection_id
    return _encode(value)


def error_body(code: int, message: str, request_id: RequestId = None) -> bytes:
    """A JSON-RPC error response."""
    error = ErrorObject(code, message)
    return _encode({"jsonrpc": "2.0", "id": request_id, "error": error})


def _session_of(params: msgspec.Raw) -> str | None:
    if not params:
        return None
    try:
        return _decode_scoped(params).session_id
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None  # params that are a list, or a sessionId that is not text: not a session's


def _not_an_object(data: bytes) -> BadMessage:
    try:
        value: Any = _decode_any(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as error:
        return BadMessage(400, PARSE_ERROR, f"not JSON: {error}")
    if isinstance(value, list):
        return BadMessage(501, INVALID_REQUEST, "batch requests are not supported")
    return BadMessage(400, INVALID_REQUEST, "not a JSON-RPC message: expected a JSON object")
