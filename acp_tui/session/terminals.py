"""The terminals' part of the reducer: one state for every terminal shown in a tool call,
whoever runs it: v2's display terminals (`terminal_update`, `terminal_output_chunk`), the
commands acp-tui runs for a v1 agent (`terminal/*`), and those an agent runs itself and
reports in tool call `_meta`.
"""

from __future__ import annotations

import binascii
from typing import Any

from msgspec import UNSET

from acp_tui.protocol.content import ToolCallContent
from acp_tui.protocol.updates import TerminalOutputChunk, TerminalUpdate
from acp_tui.session import state as s
from acp_tui.session.change import Change


def retitle_terminals(state: s.SessionState, call: s.ToolCallState, before: str) -> None:
    """A terminal named after its call (an agent's own, from `terminal_info`) follows the
    call's title: claude-agent-acp announces its Bash as "Terminal" and names the command
    later, in an update without `_meta`."""
    for item in call.content:
        terminal = state.terminals.get(item.terminal_id or "") if item.type == "terminal" else None
        if terminal is not None and terminal.command in (None, before):
            terminal.command = call.title


def show_terminal(call: s.ToolCallState, terminal_id: str) -> None:
    """Give the card the terminal an agent announced in `_meta.terminal_info`, unless its
    content already shows it."""
    for item in call.content:
        if item.type == "terminal" and item.terminal_id == terminal_id:
            return
    call.content.append(ToolCallContent("terminal", terminal_id=terminal_id))


def terminal_for(state: s.SessionState, terminal_id: str) -> s.TerminalState:
    terminal = state.terminals.get(terminal_id)
    if terminal is None:
        terminal = state.terminals[terminal_id] = s.TerminalState(terminal_id)
    return terminal


def terminal_update(state: s.SessionState, update: TerminalUpdate) -> Change:
    terminal = terminal_for(state, update.terminal_id)
    if update.command is not UNSET:
        terminal.command = update.command
    if update.cwd is not UNSET:
        terminal.cwd = update.cwd
    if update.output is not UNSET:
        terminal.output = bytearray()
        if update.output:
            _keep_output(terminal, _b64(update.output.data))
    if update.exit_status is not UNSET:
        status = update.exit_status
        terminal.exited = status is not None
        terminal.exit_code = (
            status.exit_code if status and isinstance(status.exit_code, int) else None
        )
        terminal.signal = status.signal if status and isinstance(status.signal, str) else None
    return Change("terminal", terminal)


def terminal_chunk(state: s.SessionState, update: TerminalOutputChunk) -> Change:
    terminal = terminal_for(state, update.terminal_id)
    data = _b64(update.data)
    _keep_output(terminal, data)
    return Change("terminal", terminal, data)


TERMINAL_KEEP_BYTES = 1 << 20
"""How much of a terminal's output the transcript keeps to show (the newest)."""


def terminal_output(state: s.SessionState, terminal_id: str, data: bytes) -> Change:
    """Output of a terminal acp-tui runs for the agent (v1 `terminal/create`)."""
    terminal = terminal_for(state, terminal_id)
    _keep_output(terminal, data)
    return Change("terminal", terminal, data)


def _keep_output(terminal: s.TerminalState, data: bytes) -> None:
    """Append output, keeping only the newest `TERMINAL_KEEP_BYTES` of it."""
    terminal.output += data
    if len(terminal.output) > TERMINAL_KEEP_BYTES:
        del terminal.output[: len(terminal.output) - TERMINAL_KEEP_BYTES]
        terminal.truncated = True


def terminal_started(state: s.SessionState, terminal_id: str, command: str, cwd: str) -> Change:
    terminal = terminal_for(state, terminal_id)
    terminal.command, terminal.cwd = command, cwd
    return Change("terminal", terminal)


def terminal_exited(
    state: s.SessionState, terminal_id: str, exit_code: int | None, signal: str | None
) -> Change:
    terminal = terminal_for(state, terminal_id)
    terminal.exited, terminal.exit_code, terminal.signal = True, exit_code, signal
    return Change("terminal", terminal)


TERMINAL_META_KEYS = frozenset(
    ("terminal_info", "terminal_output", "terminal_output_delta", "terminal_exit")
)
"""Tool call `_meta` keys of the terminals agents run themselves (see `meta_terminal`)."""


def meta_terminal(
    state: s.SessionState, call: s.ToolCallState, meta: dict[str, Any]
) -> list[Change]:
    """A terminal the agent runs itself, reported in tool call `_meta` (claude-agent-acp's
    Bash tool, to clients that advertise `_meta.terminal_output`): `terminal_info` names it,
    `terminal_output` and `terminal_output_delta` carry output to append, `terminal_exit` its
    end. It becomes the same terminal state as `terminal/*` and v2's `terminal_update`."""
    changes = []
    info = meta.get("terminal_info")
    if isinstance(info, dict) and isinstance(info.get("terminal_id"), str):
        terminal = terminal_for(state, info["terminal_id"])
        if call.title:  # the command, once the agent knows it ("Terminal" before)
            terminal.command = call.title
        if isinstance(info.get("cwd"), str):
            terminal.cwd = info["cwd"]
        changes.append(Change("terminal", terminal))
    for key in ("terminal_output", "terminal_output_delta"):
        output = meta.get(key)
        if isinstance(output, dict) and isinstance(output.get("terminal_id"), str):
            data = output.get("data")
            if isinstance(data, str) and data:
                changes.append(terminal_output(state, output["terminal_id"], data.encode()))
    end = meta.get("terminal_exit")
    if isinstance(end, dict) and isinstance(end.get("terminal_id"), str):
        terminal = terminal_for(state, end["terminal_id"])
        unseen = raw_output_text(call.raw_output) if not terminal.output else None
        if unseen:
            # Codex streams nothing for a command that ends at once: its output is only in
            # the call's `rawOutput`, which would leave the terminal empty.
            changes.append(terminal_output(state, terminal.id, unseen.encode()))
        code, signal = end.get("exit_code"), end.get("signal")
        changes.append(
            terminal_exited(
                state,
                end["terminal_id"],
                code if isinstance(code, int) else None,
                signal if isinstance(signal, str) else None,
            )
        )
    return changes


_RAW_OUTPUT_KEYS = ("aggregated_output", "formatted_output", "output", "stdout")
"""Where agents put a finished command's whole output in `rawOutput` (Codex: the first two)."""


def raw_output_text(raw_output: Any) -> str | None:
    """A finished command's whole output in a call's `rawOutput`, if it is there."""
    if isinstance(raw_output, dict):
        for key in _RAW_OUTPUT_KEYS:
            text = raw_output.get(key)
            if isinstance(text, str) and text:
                return text
    return None


def _b64(data: str) -> bytes:
    try:
        return binascii.a2b_base64(data)
    except (binascii.Error, ValueError):
        return f"[output that is not base64: {data[:80]!r}]".encode()
