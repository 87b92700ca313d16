"""JSON-RPC 2.0 envelopes and error codes, as ACP uses them over stdio.

One struct decodes every incoming object; its shape says what it is (a request has `method` and
`id`, a notification has `method` only, a response has neither). `params` and `result` stay
`msgspec.Raw` so each is decoded once, later, into the type its method calls for.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

RequestId = int | str | None

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002


class ErrorObject(msgspec.Struct, omit_defaults=True):
    code: int
    message: str
    data: Any = None


class Incoming(msgspec.Struct):
    """Any JSON-RPC object read from the wire, before we know which kind it is."""

    jsonrpc: str | UnsetType = UNSET
    id: RequestId | UnsetType = UNSET
    method: str | UnsetType = UNSET
    params: msgspec.Raw = msgspec.Raw()
    result: msgspec.Raw = msgspec.Raw()
    error: ErrorObject | UnsetType = UNSET

    @property
    def is_request(self) -> bool:
        return self.method is not UNSET and self.id is not UNSET

    @property
    def is_notification(self) -> bool:
        return self.method is not UNSET and self.id is UNSET

    @property
    def is_response(self) -> bool:
        return self.method is UNSET and (bool(self.result) or self.error is not UNSET)


class RpcError(Exception):
    """A JSON-RPC error: raised by handlers to answer with an error, and by `request()` when
    the peer answered with one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    def to_object(self) -> ErrorObject:
        return ErrorObject(self.code, self.message, self.data)

    @classmethod
    def from_object(cls, error: ErrorObject) -> RpcError:
        return cls(error.code, error.message, error.data)


class ConnectionClosed(RpcError):
    """The peer went away before it answered."""

    def __init__(self, message: str = "the agent closed the connection") -> None:
        super().__init__(INTERNAL_ERROR, message)


def method_not_found(method: str) -> RpcError:
    return RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
