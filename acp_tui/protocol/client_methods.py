"""Params and results of the v1 methods an agent calls on the client: `fs/*` and `terminal/*`.

Params are decoded leniently, as the schema asks (`x-deserialize-default-on-error`): unknown keys
are ignored, and a malformed *optional* field is treated as absent rather than failing the
request. A missing or malformed *required* field is answered with `-32602 Invalid params`, and
so is a malformed field a struct lists in `EXACT` (see `CreateTerminalRequest`).
Results are exact: each struct encodes to the schema's `…Response` shape.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from acp_tui.protocol.jsonrpc import INVALID_PARAMS, RpcError

T = TypeVar("T")

Line = Annotated[int, msgspec.Meta(ge=1)]
"""A 1-based line number (`line: 0` or a negative one is malformed, so treated as absent)."""

Count = Annotated[int, msgspec.Meta(ge=0)]
"""A line count or byte count (uint in the schema)."""


# -- fs/* -------------------------------------------------------------------------------------


class ReadTextFileRequest(msgspec.Struct, rename="camel"):
    session_id: str
    path: str
    line: Line | None = None
    limit: Count | None = None


class ReadTextFileResponse(msgspec.Struct, rename="camel"):
    content: str


class WriteTextFileRequest(msgspec.Struct, rename="camel"):
    session_id: str
    path: str
    content: msgspec.Raw
    """The JSON string as sent: a write of hundreds of megabytes is decoded a piece at a time
    as it is written (`acp_tui.services.json_string`), never whole."""


# -- terminal/* -------------------------------------------------------------------------------


class EnvVariable(msgspec.Struct, rename="camel"):
    name: str
    value: str


class CreateTerminalRequest(msgspec.Struct, rename="camel"):
    EXACT: ClassVar[frozenset[str]] = frozenset({"args", "env", "cwd"})
    """Never dropped when malformed, whatever the schema's leniency: a command runs exactly as
    asked or not at all (`rm` with `["-rf", "build", 7]` must not run as a bare `rm`, nor a
    malformed `cwd` in the session's cwd)."""

    session_id: str
    command: str
    args: list[str] = msgspec.field(default_factory=list)
    env: list[EnvVariable] = msgspec.field(default_factory=list)
    cwd: str | None = None
    output_byte_limit: Count | None = None


class CreateTerminalResponse(msgspec.Struct, rename="camel"):
    terminal_id: str


class TerminalRequest(msgspec.Struct, rename="camel"):
    """The params of `terminal/output`, `wait_for_exit`, `kill` and `release`: all four name
    one terminal of one session."""

    session_id: str
    terminal_id: str


class TerminalExitStatus(msgspec.Struct, rename="camel"):
    """How a command ended: `exitCode` for a normal exit, `signal` (e.g. "SIGKILL") when a signal
    ended it; the other is null. Also the whole result of `terminal/wait_for_exit`."""

    exit_code: int | None = None
    signal: str | None = None


class TerminalOutputResponse(msgspec.Struct, rename="camel", omit_defaults=True):
    output: str
    truncated: bool
    exit_status: TerminalExitStatus | UnsetType = UNSET


# -- decoding ---------------------------------------------------------------------------------

_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}
_decode_object = msgspec.json.Decoder(dict[str, Any]).decode


def decode_params(params: msgspec.Raw, params_type: type[T]) -> T:
    """Decode one request's params as `params_type`, leniently (see the module docstring).

    Raises `RpcError(-32602)` naming what is wrong when the params are not an object, a required
    field is missing or malformed, or an `EXACT` field is malformed.
    """
    decoder = _decoders.get(params_type)
    if decoder is None:
        decoder = _decoders[params_type] = msgspec.json.Decoder(params_type)
    raw = params or b"null"  # not `bytes(params)`: a big write's content is never copied
    try:
        decoded: T = decoder.decode(raw)
        return decoded
    except msgspec.DecodeError as first:
        # Only a ValidationError can be cured by dropping fields; anything else (a string the
        # decoder cannot take, e.g. a lone UTF-16 surrogate) is reported as is.
        if not isinstance(first, msgspec.ValidationError):
            raise RpcError(INVALID_PARAMS, f"Invalid params: {first}") from first
        try:
            fields = _decode_object(raw)
        except msgspec.DecodeError:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {first}") from first
    exact: frozenset[str] = getattr(params_type, "EXACT", frozenset())
    for field in msgspec.structs.fields(params_type):  # type: ignore[arg-type]
        if field.required or field.name in exact or field.encode_name not in fields:
            continue
        try:
            msgspec.convert(fields[field.encode_name], field.type)
        except msgspec.ValidationError:
            del fields[field.encode_name]
    try:
        return msgspec.convert(fields, params_type)
    except msgspec.ValidationError as exc:
        raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from exc
