"""What headless mode prints of a session: the agent's text as it streams (`TextPrinter`), or
one JSON object per change (`JsonPrinter`, `--output-format jsonl`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from acp_tui.headless.output import Output
from acp_tui.protocol.content import ContentBlock, ToolCallContent, ToolCallLocation, block_text
from acp_tui.session.change import Change
from acp_tui.session.guard import unasked
from acp_tui.session.session import Session
from acp_tui.session.state import (
    Message,
    Notice,
    PermissionAnswer,
    PlanState,
    SessionState,
    TerminalState,
    ToolCallState,
)


class TextPrinter:
    """Streams the agent's message text to `out`, a blank line between messages; a permission
    request the policy answered goes to `said` (stderr)."""

    def __init__(self, out: Output, said: Callable[[str], None]) -> None:
        self._out = out
        self._said = said
        self._printed: dict[str, int] = {}
        self._last: str | None = None
        self._at_line_start = True
        self._commands: set[str] = set()

    def __call__(self, session: Session, change: Change) -> None:
        message = change.item
        if change.kind != "message" or message.role != "agent":
            if change.kind == "permission" and change.delta.by == "policy":
                self._said_answer(session, change.delta)
            elif change.kind == "tool_call" and unasked(message.id):
                self._said_command(message)
            return
        done = self._printed.get(message.id, 0)
        text = block_text(change.delta) if change.delta is not None else message.text[done:]
        if not text:
            return
        if self._last not in (None, message.id):
            self._write("\n" if self._at_line_start else "\n\n")
        self._last = message.id
        self._printed[message.id] = done + len(text)
        self._write(text)

    def _said_answer(self, session: Session, answer: PermissionAnswer) -> None:
        option = answer.option_id or "cancelled"
        call = session.state.tool_calls.get(answer.tool_call_id or "")
        about = call.title if call is not None and call.title else answer.tool_call_id
        about = about or "a request about no tool call"
        if unasked(answer.tool_call_id):
            about = f"{about} (the agent did not ask)"
        self._said(f"permission for {about}: {option} ({answer.reason})")

    def _said_command(self, call: ToolCallState) -> None:
        """A command run outside any tool call is said once, as it starts."""
        if call.status == "in_progress" and call.id not in self._commands:
            self._commands.add(call.id)
            self._said(f"{call.title}: a command the agent runs outside any tool call")

    def end_turn(self) -> None:
        if not self._at_line_start:
            self._write("\n")
        self._last = None

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._at_line_start = text.endswith("\n")


class JsonPrinter:
    """One JSON object per state change, on its own line."""

    def __init__(self, out: Output) -> None:
        self._out = out
        self._encode = msgspec.json.Encoder().encode
        self._tool_calls = ToolCallEvents()
        self._terminals = TerminalEvents()

    def __call__(self, session: Session, change: Change) -> None:
        """Events are encoded at the end of the burst (`Output.write_event`): so each holds
        tuples, not the state's lists, which a later change of the burst may add to."""
        item = change.item
        cls = item.__class__
        if cls is Message and change.delta is not None:  # most changes: a chunk streamed in
            kind = "thought" if item.role == "thought" else "message"
            self._out.write_event(_Appended(kind, item.id, item.role, change.delta))
            return
        if change.kind == "permission":
            answer = change.delta
            if answer.by == "policy":
                event = {
                    "type": "permission",
                    "toolCallId": answer.tool_call_id,
                    "optionId": answer.option_id,
                    "reason": answer.reason,
                }
                self._out.write_event(event)
            return
        if cls is ToolCallState:
            event: dict[str, Any] | None = self._tool_calls(item)
        elif cls is TerminalState:
            event = self._terminals(item, change.delta)
        elif change.kind == "config":  # an option's value is set in place: encoded now
            event = change_event(session, change)
            if event is not None:
                self.emit(event)
            return
        else:
            event = change_event(session, change)
        if event is not None:
            self._out.write_event(event)

    def emit(self, event: dict[str, Any]) -> None:
        """Print `event`, encoded now."""
        self._out.write_bytes(self._encode(event) + b"\n")


class _Appended(msgspec.Struct, gc=False):
    """The event of content streamed onto a message: `{"type": "message" or "thought", "id",
    "role", "append": the block}`, a struct because it is most of a turn's events."""

    type: str
    id: str
    role: str
    append: ContentBlock


class ToolCallEvents:
    """The jsonl events of tool calls. The first about a call has all of it; each later one
    only what changed since the one before (a content item added: `append`), as messages
    have: a status update does not print the call's diffs again, so the output grows with
    what the agent sent, not with the updates times the call's size."""

    def __init__(self) -> None:
        self._shown: dict[ToolCallState, _Shown] = {}

    def __call__(self, call: ToolCallState) -> dict[str, Any]:
        shown = self._shown.get(call)
        if shown is None:
            self._shown[call] = _Shown(
                call.title,
                call.kind,
                call.status,
                call.locations,
                len(call.locations),
                call.content,
                len(call.content),
                call.raw_input,
                call.raw_output,
            )
            return {
                "type": "tool_call",
                "id": call.id,
                "title": call.title,
                "kind": call.kind,
                "status": call.status,
                "locations": tuple(call.locations),
                "content": tuple(call.content),
                "rawInput": call.raw_input,
                "rawOutput": call.raw_output,
            }
        event: dict[str, Any] = {"type": "tool_call", "id": call.id}
        if call.title != shown.title:
            event["title"] = shown.title = call.title
        if call.kind != shown.kind:
            event["kind"] = shown.kind = call.kind
        if call.status != shown.status:
            event["status"] = shown.status = call.status
        # The reducer replaces a list it is sent, and appends to the one it has
        # (`tool_call_content_chunk`, a terminal named in `_meta`).
        if call.locations is not shown.locations or len(call.locations) != shown.location_count:
            shown.locations = call.locations
            event["locations"] = tuple(call.locations)
            shown.location_count = len(call.locations)
        content = call.content
        if content is not shown.content or len(content) != shown.content_count:
            appended = content is shown.content and len(content) == shown.content_count + 1
            if appended:
                event["append"] = content[-1]
            else:
                shown.content = content
                event["content"] = tuple(content)
            shown.content_count = len(content)
        # Raw values are replaced whole, each a fresh object from the wire.
        if call.raw_input is not shown.raw_input:
            event["rawInput"] = shown.raw_input = call.raw_input
        if call.raw_output is not shown.raw_output:
            event["rawOutput"] = shown.raw_output = call.raw_output
        return event


@dataclass(slots=True)
class _Shown:
    """What the events about a tool call have shown of it so far."""

    title: str
    kind: str
    status: str
    locations: list[ToolCallLocation]
    location_count: int
    content: list[ToolCallContent]
    content_count: int
    raw_input: Any
    raw_output: Any


class TerminalEvents:
    """The jsonl events of terminals, as `ToolCallEvents` for calls: the first about a terminal
    has all of it; each later one only what changed. Output streamed in is `append`; the whole
    `output` comes again only when the agent replaced it (v2's `terminal_update`); how the
    command ended (`exited`, `exitCode`, `signal`) comes once, when it does."""

    def __init__(self) -> None:
        self._shown: dict[TerminalState, _ShownTerminal] = {}

    def __call__(self, terminal: TerminalState, added: bytes | None) -> dict[str, Any]:
        shown = self._shown.get(terminal)
        if shown is None:
            self._shown[terminal] = _ShownTerminal(
                terminal.command, terminal.cwd, terminal.output, terminal.exited
            )
            return {
                "type": "terminal",
                "id": terminal.id,
                "command": terminal.command,
                "cwd": terminal.cwd,
                "output": _output_text(terminal.output),
                **_ending(terminal),
            }
        event: dict[str, Any] = {"type": "terminal", "id": terminal.id}
        if terminal.command != shown.command:
            event["command"] = shown.command = terminal.command
        if terminal.cwd != shown.cwd:
            event["cwd"] = shown.cwd = terminal.cwd
        if terminal.output is not shown.output:  # replaced whole
            event["output"] = _output_text(terminal.output)
            shown.output = terminal.output
        elif added is not None:
            event["append"] = _output_text(added)
        if terminal.exited != shown.exited:
            shown.exited = terminal.exited
            event |= _ending(terminal)
        return event


@dataclass(slots=True)
class _ShownTerminal:
    """What the events about a terminal have shown of it so far."""

    command: str | None
    cwd: str | None
    output: bytearray
    exited: bool


def _output_text(data: bytes | bytearray) -> str:
    return bytes(data).decode(errors="replace")


def _ending(terminal: TerminalState) -> dict[str, Any]:
    return {"exited": terminal.exited, "exitCode": terminal.exit_code, "signal": terminal.signal}


def change_event(session: Session, change: Change) -> dict[str, Any] | None:
    """The JSON object `jsonl` prints for one change (content streamed onto a message:
    `_Appended`; tool calls: `ToolCallEvents`; terminals: `TerminalEvents`)."""
    item = change.item
    make = _SESSION_EVENTS.get(change.kind)
    if make is not None:  # a session-wide field (a turn's end: its notice is in `stopReason`)
        return {"type": change.kind, **make(session.state)}
    if isinstance(item, Message):  # its content replaced
        kind = "thought" if item.role == "thought" else "message"
        return {"type": kind, "id": item.id, "role": item.role, "content": tuple(item.content)}
    if isinstance(item, PlanState):
        return {"type": "plan", "id": item.id, "entries": tuple(item.entries), "text": item.text}
    if isinstance(item, Notice):
        event = {
            "type": "notice",
            "severity": item.severity,
            "title": item.title,
            "detail": item.detail,
        }
        if item.key is not None:  # one the agent patches in place: a compaction
            event["id"] = item.key
        return event
    return None


_SESSION_EVENTS: dict[str, Callable[[SessionState], dict[str, Any]]] = {
    "usage": lambda state: {"used": state.usage_used, "size": state.usage_size, "cost": state.cost},
    "commands": lambda state: {"commands": tuple(state.commands)},
    "modes": lambda state: {"current": state.current_mode, "modes": tuple(state.modes)},
    "config": lambda state: {"options": state.config_options},
    "info": lambda state: {"title": state.title, "updatedAt": state.updated_at},
    "status": lambda state: (
        {"status": state.status, "stopReason": state.stop_reason}
        | (
            {"usage": state.turn_usage}
            if state.status == "idle" and state.turn_usage is not None
            else {}
        )
    ),
}
"""The events of changes to session-wide fields, by the change's kind."""
