"""The protocol inspector: every JSON-RPC line both ways, the agent's stderr, and every line
the client could not take as it came. Kept while hidden (the last `KEEP` lines), shown on F12."""

from __future__ import annotations

from collections import deque
from typing import Any

import msgspec
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Log, Static

KEEP = 5000
LINE_LIMIT = 2000
"""Characters shown of one line (a whole file in a diff is one line on the wire)."""
PREFIXES = {
    "send": "→ ",
    "recv": "← ",
    "stderr": "! ",
    "problem": "✗ ",
    "note": "i ",
    "violation": "⚠ ",
}


def describe(kind: str, text: str) -> str:
    """One wire line as `→ #3 session/prompt {...}` or `← session/update agent_message_chunk
    {...}`: what it is first, then the JSON (its `jsonrpc` and session id left out)."""
    prefix = PREFIXES.get(kind, "  ")
    text = text.rstrip("\n")
    if kind not in ("send", "recv"):
        return prefix + _clip(text)
    try:
        message = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return prefix + "(not JSON) " + _clip(text)
    if not isinstance(message, dict):
        return prefix + _clip(text)
    ident = f"#{message['id']} " if "id" in message else ""
    method = message.get("method")
    if isinstance(method, str):
        params: Any = message.get("params")
        if isinstance(params, dict):
            params = {k: v for k, v in params.items() if k != "sessionId"}
            update = params.get("update")
            if method == "session/update" and isinstance(update, dict):
                tag = update.get("sessionUpdate", "?")
                rest = {k: v for k, v in update.items() if k != "sessionUpdate"}
                return f"{prefix}{method} {tag}  {_clip(_json(rest))}"
        return f"{prefix}{ident}{method}  {_clip(_json(params))}"
    if "error" in message:
        return f"{prefix}{ident}error  {_clip(_json(message['error']))}"
    return f"{prefix}{ident}result  {_clip(_json(message.get('result')))}"


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def _clip(text: str) -> str:
    if len(text) > LINE_LIMIT:
        return f"{text[:LINE_LIMIT]} … ({len(text) - LINE_LIMIT} more characters)"
    return text


class Inspector(Vertical):
    """A side panel with a fast, append-only log."""

    DEFAULT_CSS = """
    Inspector {
        display: none;
        width: 45%;
        height: 1fr;
        border-left: solid $foreground 15%;
        background: $surface;
    }
    Inspector.-open { display: block; }
    Inspector > .inspector--title {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
        text-style: bold;
    }
    Inspector > Log {
        height: 1fr;
        background: $surface;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: deque[tuple[str, str]] = deque(maxlen=KEEP)
        """(kind, raw text): described only when shown, so a hidden inspector costs nothing."""
        self._counts = {"send": 0, "recv": 0, "stderr": 0, "problem": 0, "violation": 0}

    def compose(self) -> ComposeResult:
        yield Static("Protocol inspector", classes="inspector--title")
        yield Log(max_lines=KEEP, highlight=True, auto_scroll=True)

    @property
    def open(self) -> bool:
        return self.has_class("-open")

    def toggle(self) -> None:
        opening = not self.open
        self.set_class(opening, "-open")
        if opening:
            log = self.query_one(Log)
            log.clear()
            log.write_lines([describe(kind, text) for kind, text in self._lines])
        self._title()

    def add(self, kind: str, text: str) -> None:
        """Record one line: `send`, `recv`, `stderr`, `problem`, `note` or `violation` (a
        message of the agent's that breaks the schema, right after that message)."""
        self._counts[kind] = self._counts.get(kind, 0) + 1
        # stderr comes in arbitrary chunks: keep it a line at a time.
        entries = (
            [(kind, line) for line in text.splitlines()] if kind == "stderr" else [(kind, text)]
        )
        self._lines.extend(entries)
        if self.open and self.children:
            self.query_one(Log).write_lines([describe(k, t) for k, t in entries])
            self._title()

    def _title(self) -> None:
        counts = self._counts
        self.query_one(".inspector--title", Static).update(
            f"Protocol inspector   → {counts['send']} sent   ← {counts['recv']} received"
            f"   ! {counts['stderr']} stderr   ✗ {counts['problem']} problems"
            + (f"   ⚠ {counts['violation']} violations" if counts["violation"] else "")
        )
