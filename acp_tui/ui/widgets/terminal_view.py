"""Live terminal output inside a tool call: the command, its output (ANSI colours kept), and
how it ended. Output is repainted at most once per frame however fast it arrives."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.strip import Strip
from textual.timer import Timer

from acp_tui.protocol.content import ToolCallContent
from acp_tui.session.state import SessionState, TerminalState
from acp_tui.ui.widgets.strips_view import StripsView, render_strips

FOLDED_LINES = 12
"""Output lines shown (the last ones) until the tool call is expanded."""
EXPANDED_BYTES = 256 * 1024
"""At most this much of the end of the output is rendered, even expanded."""


def exit_text(exit_code: int | None, signal: str | None) -> Text:
    """How a command ended: `✓ exit 0`, `✗ exit 2`, `✗ killed by SIGTERM`."""
    if signal:
        return Text(f"✗ killed by {signal}", "acp.error")
    if exit_code == 0:
        return Text("✓ exit 0", "acp.success")
    return Text(f"✗ exit {exit_code}", "acp.error")


class TerminalView(StripsView):
    """One `terminal` item of a tool call's content."""

    DEFAULT_CSS = """
    TerminalView {
        width: 1fr;
        height: auto;
        margin: 1 0 0 0;
        background: $background-darken-1 60%;
        padding: 0 1;
    }
    """

    def __init__(
        self, item: ToolCallContent, state: SessionState, command: str | None = None
    ) -> None:
        super().__init__()
        self._item = item
        self._state = state
        self.command = command
        """The command as the tool call described it, for terminals that do not say (v1)."""
        self.expanded = False
        self.call_status = "in_progress"
        """The status of the tool call it shows the command of (the card keeps it)."""
        self._timer: Timer | None = None

    @property
    def terminal_id(self) -> str:
        return self._item.terminal_id if isinstance(self._item.terminal_id, str) else ""

    @property
    def terminal(self) -> TerminalState | None:
        return self._state.terminals.get(self.terminal_id)

    def sync(self, item: ToolCallContent) -> None:
        other = item.terminal_id != self._item.terminal_id
        self._item = item
        if other:  # another terminal (the card shows another call): at once, not next frame
            self.invalidate()
        else:
            self.output_changed()

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self.invalidate()

    def set_call_status(self, status: str) -> None:
        if status != self.call_status:
            self.call_status = status
            self.invalidate()

    def output_changed(self) -> None:
        """The terminal has new output or ended: repaint on the next frame."""
        if self._timer is None and self.is_attached:
            self._timer = self.set_timer(1 / 60, self._repaint)

    def _repaint(self) -> None:
        self._timer = None
        self.invalidate()

    def _renderable(self) -> RenderableType:
        terminal = self.terminal
        parts: list[RenderableType] = []
        if terminal is None:
            return Text("waiting for the terminal…", "acp.muted")
        if terminal.command or self.command:
            command = Text("$ ", "acp.accent")
            command.append(terminal.command or self.command or "", "bold")
            parts.append(command)
        data = bytes(terminal.output[-EXPANDED_BYTES:])
        output = Text.from_ansi(data.decode("utf-8", errors="replace").rstrip("\n"))
        lines = output.split("\n", allow_blank=True) if output.plain else []
        if not self.expanded and len(lines) > FOLDED_LINES:
            hidden = len(lines) - FOLDED_LINES
            parts.append(Text(f"… {hidden} earlier lines  (enter to expand)", "acp.muted"))
            lines = lines[-FOLDED_LINES:]
        parts.extend(lines)
        if terminal.truncated:
            parts.insert(1, Text("(output truncated by the client)", "acp.muted"))
        status = self._status(terminal)
        if status is not None:
            parts.append(status)
        return Group(*parts)

    def _status(self, terminal: TerminalState) -> Text | None:
        if terminal.exited:
            return exit_text(terminal.exit_code, terminal.signal)
        # An agent announces its own terminal with the call (claude-agent-acp's Bash), before
        # it asks permission to run it: running only once the call is, or output shows it
        # is. A call over without the terminal saying how: the card's status says it.
        call = self.call_status
        if call == "in_progress" or (call == "pending" and terminal.output):
            return Text("● running", "acp.warning")
        return None

    def build_lines(self, width: int) -> list[Strip]:
        return render_strips(self.palette, self._renderable(), width)

    def text(self) -> str:
        terminal = self.terminal
        return bytes(terminal.output).decode("utf-8", errors="replace") if terminal else ""
