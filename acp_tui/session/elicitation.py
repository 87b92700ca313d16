"""Elicitation: an agent asks the user for answers (form mode) or to visit a page (URL mode).

Pure Python, shared by the TUI and headless mode. `parse_form` reads the restricted JSON Schema
of a form request into `FormField`s, leniently (a property of a type from the future becomes a
free-text field, a malformed constraint is ignored); `check_answers` turns what the user
entered into the `content` of an `accept`, or says per field what is wrong, so nothing invalid
is ever sent. `PendingElicitation` is one request waiting for the user, bound to its turn like
a permission request: a cancelled turn answers it `cancel`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, Literal, cast
from urllib.parse import urlsplit

import msgspec

from acp_tui.protocol import methods as m

FieldKind = Literal["text", "number", "integer", "boolean", "choice", "choices"]
Action = Literal["accept", "decline", "cancel"]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class Choice(msgspec.Struct, frozen=True):
    value: str
    title: str
    description: str | None = None


class FormField(msgspec.Struct, frozen=True):
    """One property of a form: what to ask, how to ask it, and what a valid answer is."""

    name: str
    kind: FieldKind
    title: str
    description: str | None = None
    required: bool = False
    default: Any = None
    choices: tuple[Choice, ...] = ()
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    asked_type: str | None = None
    """The schema's own type when it is one acp-tui does not know (answered as text)."""

    def hint(self) -> str:
        """The constraints in a few words, e.g. "date, YYYY-MM-DD" or "1 to 10"."""
        parts: list[str] = []
        if self.format:
            parts.append(_FORMAT_HINTS.get(self.format, self.format))
        if self.kind in ("number", "integer"):
            parts.append(_range(self.minimum, self.maximum) or self.kind)
        if self.min_length or self.max_length is not None:
            parts.append(f"{_range(self.min_length, self.max_length)} characters")
        if self.kind == "choices" and (self.min_items or self.max_items is not None):
            parts.append(f"pick {_range(self.min_items, self.max_items)}")
        if self.asked_type:
            parts.append(f"a {self.asked_type!r} value, typed as text")
        return ", ".join(parts)


_FORMAT_HINTS = {
    "email": "email address",
    "uri": "URL",
    "date": "date, YYYY-MM-DD",
    "date-time": "date and time, YYYY-MM-DDTHH:MM",
}


class Form(msgspec.Struct, frozen=True):
    fields: tuple[FormField, ...]
    title: str | None = None
    description: str | None = None


def parse_form(schema: object) -> Form:
    """The fields of a form request's `requestedSchema`, in the agent's order."""
    if not isinstance(schema, Mapping):
        return Form(())
    properties = schema.get("properties")
    required = schema.get("required")
    wanted = {str(name) for name in required} if isinstance(required, list) else set()
    fields = tuple(
        _field(str(name), spec, str(name) in wanted)
        for name, spec in (properties.items() if isinstance(properties, Mapping) else ())
    )
    return Form(fields, _text(schema.get("title")), _text(schema.get("description")))


def _field(name: str, spec: object, required: bool) -> FormField:
    spec = spec if isinstance(spec, Mapping) else {}
    kind, asked_type = _kind(spec)
    choices = _choices(spec.get("items") if kind == "choices" else spec)
    default = spec.get("default")
    return FormField(
        name=name,
        kind=kind,
        title=_text(spec.get("title")) or name,
        description=_text(spec.get("description")),
        required=required,
        default=default if _valid_default(kind, default, choices) else None,
        choices=choices,
        format=_text(spec.get("format")),
        minimum=_number(spec.get("minimum")),
        maximum=_number(spec.get("maximum")),
        min_length=_count(spec.get("minLength")),
        max_length=_count(spec.get("maxLength")),
        pattern=_text(spec.get("pattern")),
        min_items=_count(spec.get("minItems")),
        max_items=_count(spec.get("maxItems")),
        asked_type=asked_type,
    )


def _kind(spec: Mapping[str, Any]) -> tuple[FieldKind, str | None]:
    kind = spec.get("type")
    if kind == "string":
        return ("choice" if _choices(spec) else "text"), None
    if kind in ("number", "integer", "boolean"):
        return kind, None
    if kind == "array":
        return "choices", None
    return "text", str(kind)


def _choices(spec: object) -> tuple[Choice, ...]:
    """A single-select's `enum` / titled `oneOf`, or a multi-select's `items` (`enum` /
    titled `anyOf`)."""
    if not isinstance(spec, Mapping):
        return ()
    plain = spec.get("enum")
    if isinstance(plain, list):
        return tuple(Choice(str(v), str(v)) for v in plain if isinstance(v, str | int | float))
    titled = spec.get("oneOf", spec.get("anyOf"))
    if isinstance(titled, list):
        return tuple(
            Choice(
                str(o["const"]),
                _text(o.get("title")) or str(o["const"]),
                _text(o.get("description")),
            )
            for o in titled
            if isinstance(o, Mapping) and isinstance(o.get("const"), str)
        )
    return ()


def _valid_default(kind: FieldKind, default: object, choices: tuple[Choice, ...]) -> bool:
    if default is None:
        return False
    if kind == "boolean":
        return isinstance(default, bool)
    if kind in ("number", "integer"):
        return isinstance(default, int | float) and not isinstance(default, bool)
    values = {c.value for c in choices}
    if kind == "choice":
        return default in values
    if kind == "choices":
        return isinstance(default, list) and all(v in values for v in default)
    return isinstance(default, str)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _range(low: float | None, high: float | None) -> str:
    def shown(x: float) -> str:
        return f"{x:g}"

    if low is not None and high is not None:
        return f"{shown(low)} to {shown(high)}"
    if low is not None:
        return f"at least {shown(low)}"
    if high is not None:
        return f"at most {shown(high)}"
    return ""


# -- answers ----------------------------------------------------------------------------------

Entered = str | bool | list[str] | None
"""What the user entered in one field: text (text, number, integer), a switch (boolean), the
chosen value or None (choice), the chosen values (choices)."""


def initial_value(form_field: FormField) -> Entered:
    """What a field shows before the user touches it: its default, else empty."""
    default = form_field.default
    if form_field.kind == "boolean":
        return bool(default)
    if form_field.kind == "choices":
        return list(default or [])
    if form_field.kind == "choice":
        return cast(str | None, default)
    return (
        "" if default is None else (f"{default:g}" if isinstance(default, float) else str(default))
    )


def check_answers(
    form: Form, entered: Mapping[str, Entered]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The `content` to accept with, and the problems by field name (none: it may be sent).

    An empty optional field is left out of the content; a boolean is always sent, as the user
    sees it switched on or off."""
    content: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for form_field in form.fields:
        try:
            value = check_answer(form_field, entered.get(form_field.name))
        except ValueError as problem:
            problems[form_field.name] = str(problem)
            continue
        if value is not None:
            content[form_field.name] = value
    return content, problems


def check_answer(form_field: FormField, entered: Entered) -> Any:
    """The wire value of one answer, None when left empty; ValueError says what is wrong."""
    kind = form_field.kind
    if kind == "boolean":
        return bool(entered)
    if kind == "choices":
        picked = list(entered) if isinstance(entered, list) else []
        return _check_choices(form_field, picked)
    text = entered.strip() if isinstance(entered, str) else ""
    if kind == "choice":
        text = entered if isinstance(entered, str) else ""
    if not text:
        if form_field.required:
            raise ValueError("required")
        return None
    if kind == "choice":
        if text not in {c.value for c in form_field.choices}:
            raise ValueError("not one of the choices")
        return text
    if kind in ("number", "integer"):
        return _check_number(form_field, text)
    return _check_text(form_field, text)


def _check_choices(form_field: FormField, picked: list[str]) -> list[str] | None:
    values = [c.value for c in form_field.choices]
    if any(p not in values for p in picked):
        raise ValueError("not one of the choices")
    if not picked and form_field.required and not form_field.min_items:
        raise ValueError("pick at least one")
    if form_field.min_items is not None and len(picked) < form_field.min_items:
        raise ValueError(f"pick at least {form_field.min_items}")
    if form_field.max_items is not None and len(picked) > form_field.max_items:
        raise ValueError(f"pick at most {form_field.max_items}")
    if not picked and not form_field.required:
        return None
    return sorted(picked, key=values.index)


def _check_number(form_field: FormField, text: str) -> int | float:
    value: int | float
    try:
        value = int(text) if form_field.kind == "integer" else float(text)
    except ValueError:
        raise ValueError("a whole number" if form_field.kind == "integer" else "a number") from None
    if not math.isfinite(value):
        raise ValueError("a finite number")
    if form_field.minimum is not None and value < form_field.minimum:
        raise ValueError(f"at least {form_field.minimum:g}")
    if form_field.maximum is not None and value > form_field.maximum:
        raise ValueError(f"at most {form_field.maximum:g}")
    return value


def _check_text(form_field: FormField, text: str) -> str:
    if form_field.min_length is not None and len(text) < form_field.min_length:
        raise ValueError(f"at least {form_field.min_length} characters")
    if form_field.max_length is not None and len(text) > form_field.max_length:
        raise ValueError(f"at most {form_field.max_length} characters")
    if form_field.pattern:
        try:
            matches = re.search(form_field.pattern, text) is not None
        except re.error:
            matches = True  # A pattern Python cannot read is the agent's to check again.
        if not matches:
            raise ValueError(f"must match {form_field.pattern}")
    problem = _format_problem(form_field.format, text)
    if problem:
        raise ValueError(problem)
    return text


def _format_problem(fmt: str | None, text: str) -> str | None:
    if fmt == "email" and not _EMAIL.match(text):
        return "an email address, like name@example.com"
    if fmt == "uri":
        parts = urlsplit(text)
        if not parts.scheme or not (parts.netloc or parts.path):
            return "a URL, like https://example.com"
    if fmt == "date":
        try:
            date.fromisoformat(text)
        except ValueError:
            return "a date, YYYY-MM-DD"
        if len(text) != 10:
            return "a date, YYYY-MM-DD"
    if fmt == "date-time":
        try:
            datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return "a date and time, YYYY-MM-DDTHH:MM:SS"
    return None


# -- URL mode ---------------------------------------------------------------------------------


def url_host(url: str) -> str:
    """The host a URL leads to, as the user must see it before consenting."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def url_warnings(url: str) -> list[str]:
    """What about a URL deserves a second look (the spec asks clients to warn about
    suspicious or ambiguous ones)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return ["this is not a well-formed URL"]
    warnings: list[str] = []
    if parts.scheme not in ("https", "http"):
        warnings.append(f"it is not a web address ({parts.scheme or 'no'} scheme)")
    elif parts.scheme == "http" and host not in ("localhost", "127.0.0.1", "::1"):
        warnings.append("it is not encrypted (http)")
    if not host:
        warnings.append("it names no host")
    if any(label.startswith("xn--") for label in host.split(".")) or not host.isascii():
        warnings.append("its host is an internationalized name, which can imitate another")
    if parts.username or "@" in parts.netloc:
        warnings.append("it has a user name before the host, which can hide the real host")
    try:
        ipaddress.ip_address(host)
        warnings.append("its host is a bare IP address")
    except ValueError:
        pass
    return warnings


# -- waiting for the user ---------------------------------------------------------------------


class PendingElicitation(msgspec.Struct, eq=False):
    """An `elicitation/create` waiting for the user, bound to the turn it arrived in."""

    request: m.ElicitationRequest
    future: asyncio.Future[m.ElicitationResponse]
    form: Form = msgspec.field(default_factory=lambda: Form(()))

    @property
    def done(self) -> bool:
        return self.future.done()

    @property
    def mode(self) -> str:
        return self.request.mode

    def answer(self, action: Action, content: dict[str, Any] | None = None) -> None:
        """Answer once; an answer after the turn moved on (cancelled) is ignored."""
        if not self.future.done():
            self.future.set_result(m.ElicitationResponse(action, content))

    def accept(self, content: dict[str, Any] | None = None) -> None:
        self.answer("accept", content)

    def decline(self) -> None:
        self.answer("decline")

    def cancel(self) -> None:
        self.answer("cancel")

    @property
    def about(self) -> str:
        """What is asked, in one line."""
        first = self.request.message.strip().splitlines()
        return first[0] if first else ("a page to open" if self.mode == "url" else "a question")


def describe_answer(
    pending: PendingElicitation, response: m.ElicitationResponse
) -> tuple[str, str | None]:
    """A notice for the transcript: how the user answered, and (accepted forms) with what."""
    about = pending.about
    if response.action == "decline":
        return f"You declined: {about}", None
    if response.action != "accept":
        return f"Not answered: {about}", None
    if pending.mode == "url":
        return f"You opened {url_host(pending.request.url or '')}: {about}", pending.request.url
    content = response.content or {}
    if pending.form.fields and not content:
        # Sent with nothing ticked or typed (every field optional, as Claude's questions are):
        # the agent takes it as skipped, and "You answered" would say otherwise.
        return f"You left it unanswered: {about}", None
    lines = [
        f"{form_field.title}: {_shown(form_field, content.get(form_field.name, []))}"
        for form_field in pending.form.fields
        if form_field.name in content or form_field.kind == "choices"
    ]
    return f"You answered: {about}", "\n".join(lines) or None


def _shown(form_field: FormField, value: Any) -> str:
    titles = {c.value: c.title for c in form_field.choices}
    if isinstance(value, list):
        return ", ".join(titles.get(v) or str(v) for v in value) or "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return titles.get(value, str(value)) if isinstance(value, str) else f"{value:g}"
