"""JSON-RPC 2.0 messages as a `Connection` writes and reads them: the envelopes of what we
send, the encoder and decoders, the decoder of typed notifications, and the helpers that cut
a run of lines apart, repair bad text and preview a line for a problem report.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Union

import msgspec
from msgspec import UNSET, UnsetType

from acp_tui.protocol.jsonrpc import ErrorObject, Incoming, RequestId, RpcError

CANCEL_REQUEST = "$/cancel_request"


class _CancelRequest(msgspec.Struct, rename="camel"):
    request_id: RequestId


_decode_incoming = msgspec.json.Decoder(Incoming).decode
_decode_any = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode
_result_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}
_UNREADABLE = (ValueError, RecursionError)
"""What decoding a hostile line raises: `msgspec.DecodeError` and `UnicodeDecodeError` (bad
UTF-8 inside a string) are both `ValueError`s; JSON nested too deeply is a `RecursionError`."""


Line = bytes | bytearray
"""One line as read: bytes, or for a line of over a megabyte the buffer it was read into."""

TypedNotifications = Mapping[str, tuple[Any, Callable[[list[Any]], None]]]
"""Notifications a handler wants decoded straight into a type, by method: the hot path of a
stream of updates decodes each line once, into its final type, instead of twice. The handler
takes them a run at a time (those of one read, in order; one call a run, not one a line): it
must take each on its own, so that one it cannot handle does not lose the rest."""


def _typed_decoder(
    typed: TypedNotifications,
) -> tuple[msgspec.json.Decoder[Any] | None, dict[type, Callable[[Any], None]]]:
    """A decoder for a tagged union on `method` of the given notifications, and the handler
    of each variant. The decoder fails on anything else (a request, a response, a notification
    with an `id`, params it cannot read), and the line then takes the general path."""
    handlers: dict[type, Callable[[Any], None]] = {}
    for index, (method, (params_type, handle)) in enumerate(typed.items()):
        fields: list[tuple[str, Any] | tuple[str, Any, Any]] = [
            ("params", params_type),
            ("id", UnsetType, UNSET),
        ]
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


def _error_line(request_id: RequestId, error: RpcError) -> bytes:
    return _encode(_Error("2.0", request_id, error.to_object()))


def _lines_of(run: bytes) -> list[bytes]:
    """The lines of a run of whole lines, without their newlines."""
    lines = run.split(b"\n")
    lines.pop()  # what follows the last newline: nothing
    return lines


def _repair_text(line: Line) -> Any:
    """The JSON value of a line whose only fault is its text encoding, or UNSET."""
    try:
        return json.loads(line.decode("utf-8", errors="replace"))
    except _UNREADABLE:
        return UNSET


def _preview(line: Line, limit: int = 200) -> str:
    text = line[:limit].decode("utf-8", errors="replace")
    return text + (f"… ({len(line):,} bytes)" if len(line) > limit else "")
