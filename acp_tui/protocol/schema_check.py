"""Check ACP messages against the official JSON Schema, one method at a time.

The schema's top level is too permissive to catch mistakes: every `params` and `result` falls
back to the `Ext*` catch-all types. So each message is checked against the one `$defs` entry
that describes its method, found through the entry's annotations:

- `x-method` is the JSON-RPC method name;
- `x-side` is the side that *handles* the method: `"agent"` for methods the client calls on the
  agent (`initialize`, `session/prompt`, …), `"client"` for methods the agent calls on the
  client (`session/update`, `session/request_permission`, `fs/*`, …), `"protocol"` for methods
  either side may send (`$/cancel_request`).

A method has up to three entries, told apart by the `$defs` name's suffix: `…Request` (request
params), `…Notification` (notification params) and `…Response` (the `result` of a successful
response). So a request or notification is checked against the entry handled by the receiver,
and a response against the entry of the request it answers, handled by the response's sender.

Extension methods (`_`-prefixed) are accepted unchecked, as the protocol allows them; any other
method without an entry for that version, kind and side fails, which catches e.g. a v1-only
`fs/read_text_file` request sent on a v2 connection. The few methods acp-tui uses that only
the unstable schema has (`UNSTABLE_METHODS`) are checked against that one. A failure raises
`SchemaViolation`, which says where and why in one line. Used by `acp-tui check`, the live
protocol check and the tests.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NoReturn

from jsonschema.exceptions import ValidationError, relevance
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing import Registry, Resource

Sender = Literal["client", "agent"]
Kind = Literal["request", "notification", "response"]

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
"""The official schemas, `v1.json` and `v2.json` (and their unstable editions); see
`schemas/SOURCE.md`."""
UNSTABLE_METHODS = frozenset(
    {"session/fork", "providers/list", "providers/set", "providers/disable"}
)
"""Methods acp-tui uses that are in the unstable schema only."""

_KIND_BY_SUFFIX: dict[str, Kind] = {
    "Request": "request",
    "Notification": "notification",
    "Response": "response",
}
_OTHER_SIDE: dict[Sender, Sender] = {"client": "agent", "agent": "client"}
_SNIPPET_CHARS = 400


@dataclass(frozen=True)
class _VersionSchema:
    """The compiled validators of one protocol version."""

    version: int
    by_method: dict[tuple[Kind, str, str], Validator]
    """Keyed by (kind, x-method, x-side)."""
    error: Validator
    request_id: Validator
    unstable: bool = False

    def lookup(self, kind: Kind, method: str, handled_by: Sender) -> Validator | None:
        """The validator for `method`'s `kind` as handled by `handled_by`, if the schema has one."""
        for side in (handled_by, "protocol"):
            validator = self.by_method.get((kind, method, side))
            if validator is not None:
                return validator
        if method in UNSTABLE_METHODS and not self.unstable:
            return _load(self.version, unstable=True).lookup(kind, method, handled_by)
        return None


@functools.cache
def _load(version: int, *, unstable: bool = False) -> _VersionSchema:
    """Read and compile the schema of `version` (its unstable edition) once per process."""
    edition = ".unstable" if unstable else ""
    path = SCHEMA_DIR / f"v{version}{edition}.json"
    if not path.is_file():
        raise ValueError(f"no ACP schema for version {version!r} (looked for {path})")
    root = json.loads(path.read_text(encoding="utf-8"))
    base_uri = f"urn:acp:schema:v{version}{edition}"
    registry = Registry().with_resource(base_uri, Resource.from_contents(root))
    validator_class = validator_for(root)

    def compile_def(name: str) -> Validator:
        # A bare $ref into the registered root keeps every nested "#/$defs/…" resolvable.
        return validator_class({"$ref": f"{base_uri}#/$defs/{name}"}, registry=registry)

    by_method: dict[tuple[Kind, str, str], Validator] = {}
    for name, definition in root["$defs"].items():
        if "x-method" not in definition:
            continue
        key = (_kind_of(name), definition["x-method"], definition["x-side"])
        if key in by_method:
            raise ValueError(f"ACP v{version} schema: two $defs for {key}")
        by_method[key] = compile_def(name)
    return _VersionSchema(
        version, by_method, compile_def("Error"), compile_def("RequestId"), unstable
    )


def _kind_of(def_name: str) -> Kind:
    for suffix, kind in _KIND_BY_SUFFIX.items():
        if def_name.endswith(suffix):
            return kind
    raise ValueError(f"cannot tell the message kind of $defs/{def_name}")


def validate_message(
    msg: dict[str, Any],
    *,
    version: int,
    sender: Sender,
    request_method: str | None = None,
) -> None:
    """Raise `SchemaViolation` unless `msg` is a valid ACP message.

    `sender` is the side that wrote `msg`. A successful response needs `request_method`, the
    method of the request it answers; an error response is checked against the JSON-RPC error
    shape, whatever it answers. Missing or null `params` are checked as `{}`, so a method with
    required parameters fails and one without passes.
    """
    schema = _load(version)
    context = _Context(msg, version, sender)
    if not isinstance(msg, dict):
        context.fail("$", "a JSON-RPC message must be an object")
    if msg.get("jsonrpc") != "2.0":
        context.fail("$.jsonrpc", f'must be "2.0", got {msg.get("jsonrpc")!r}')
    if "method" in msg:
        _validate_call(schema, context, msg)
    elif "result" in msg or "error" in msg:
        _validate_response(schema, context, msg, request_method)
    else:
        context.fail("$", "neither a request, a notification nor a response")


def _validate_call(schema: _VersionSchema, context: _Context, msg: dict[str, Any]) -> None:
    """Check a request (has `id`) or a notification (has none)."""
    method = msg["method"]
    if not isinstance(method, str):
        context.fail("$.method", f"must be a string, got {method!r}")
    context.label = method
    kind: Kind = "request" if "id" in msg else "notification"
    if kind == "request":
        context.check(schema.request_id, msg["id"], "$.id")
    if method.startswith("_"):
        return
    handler = _OTHER_SIDE[context.sender]
    validator = schema.lookup(kind, method, handler)
    if validator is None:
        context.fail(
            "$.method", f"ACP v{schema.version} has no {kind} {method!r} for the {handler}"
        )
    params = msg.get("params")
    context.check(validator, {} if params is None else params, "$.params")


def _validate_response(
    schema: _VersionSchema,
    context: _Context,
    msg: dict[str, Any],
    request_method: str | None,
) -> None:
    """Check a success or error response to a request the other side sent."""
    if "result" in msg and "error" in msg:
        context.fail("$", "a response carries exactly one of result and error")
    if "id" not in msg:
        context.fail("$", "a response must carry the id of the request it answers")
    context.check(schema.request_id, msg["id"], "$.id")
    context.label = f"response to {request_method or 'an unknown request'}"
    if "error" in msg:
        context.check(schema.error, msg["error"], "$.error")
        return
    if request_method is None:
        raise ValueError("request_method is required to validate a result")
    if request_method.startswith("_"):
        return
    validator = schema.lookup("response", request_method, context.sender)
    if validator is None:
        context.fail(
            "$.result",
            f"ACP v{schema.version} has no {request_method!r} answered by the {context.sender}",
        )
    context.check(validator, msg["result"], "$.result")


class SchemaViolation(ValueError):
    """A message that breaks the schema: which message, where in it, and why."""

    def __init__(self, heading: str, path: str, reason: str, snippet: str) -> None:
        super().__init__(f"{heading}: {path}: {reason}\n  message: {snippet}")
        self.heading = heading
        self.path = path
        self.reason = reason
        self.snippet = snippet

    @property
    def summary(self) -> str:
        """One line: `$.params.update.status: 'done' is not one of […]`."""
        return f"{self.path}: {self.reason}"


class _Context:
    """What a failure message needs to say: version, sender, method and the message itself."""

    def __init__(self, msg: Any, version: int, sender: Sender) -> None:
        self.msg = msg
        self.version = version
        self.sender = sender
        self.label = "message"

    def fail(self, path: str, reason: str) -> NoReturn:
        heading = f"ACP v{self.version} {self.sender} {self.label}"
        raise SchemaViolation(heading, path, reason, snippet(self.msg))

    def check(self, validator: Validator, instance: Any, path: str) -> None:
        error = _explain(validator.iter_errors(instance))
        if error is not None:
            where = path + "".join(
                f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path
            )
            self.fail(where, _shorten(error.message))


def _explain(errors: Iterable[ValidationError]) -> ValidationError | None:
    """The error that best explains why an instance failed, or None if it did not.

    Like `jsonschema.exceptions.best_match`, but at a failed `anyOf`/`oneOf` it descends only
    into the one variant the instance was meant to be: `best_match` stops at "… is not valid
    under any of the given schemas", or picks a variant by depth and reports e.g. "'cancelled'
    was expected" for an outcome that is meant to be `selected`. A variant whose tag or
    top-level type does not match is ruled out; if exactly one is left, its error is the
    useful one.
    """
    error = max(errors, key=relevance, default=None)
    while error is not None and error.context:
        variants: dict[Any, list[ValidationError]] = defaultdict(list)
        for variant_error in error.context:
            variants[variant_error.relative_schema_path[0]].append(variant_error)
        plausible = [
            found for found in variants.values() if not any(map(_rules_out_variant, found))
        ]
        if len(plausible) != 1:
            break
        error = max(plausible[0], key=relevance)
    return error


def _rules_out_variant(error: ValidationError) -> bool:
    """Whether a variant's error says the instance is another variant.

    That is a wrong tag (`const`/`enum` on a direct property), a wrong top-level type, or the
    `not` of a catch-all "unknown variant" branch.
    """
    if error.validator in ("const", "enum"):
        return len(error.relative_path) == 1
    return error.validator in ("type", "not") and not error.relative_path


def snippet(value: Any) -> str:
    """A message in one line, shortened for a report."""
    return _shorten(json.dumps(value, separators=(",", ":"), default=repr))


def _shorten(text: str) -> str:
    return text if len(text) <= _SNIPPET_CHARS else text[:_SNIPPET_CHARS] + "…"
