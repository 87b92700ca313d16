"""The session bar: one line listing the open conversations, each with its state, and the keys
that switch between them (only shown when there are two or more)."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from acp_tui.text import shorten

LABEL_WIDTH = 24
"""A conversation's label is cut to this many cells, so that several fit on the line."""
MARKS = {
    "working": "●",
    "waiting": "◆",
    "idle": "○",
    "stopped": "✗",
}
SWITCH_KEYS = Content.assemble(("alt+← →", "bold $text-accent"), " switch")
"""The switching keys that come through tmux and every terminal (Alt+digit does not)."""


class SessionBar(Widget):
    """`1 Demo ● │ 2 Fix the tests ◆ waiting for you     alt+← → switch`: the current one
    highlighted."""

    DEFAULT_CSS = """
    SessionBar {
        height: 1;
        width: 1fr;
        background: $panel-darken-1;
        color: $text-muted;
        padding: 0 1;
        display: none;
    }
    SessionBar.-several { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._listed = Content()

    def show(self, items: list[tuple[str, str, bool]]) -> None:
        """`items`: (label, state, current) per conversation, in order."""
        self.set_class(len(items) > 1, "-several")
        parts: list[Content] = []
        for label, state, current in items:
            label = shorten(label, LABEL_WIDTH)
            style = "bold $text-accent" if current else ""
            mark_style = {
                "working": "$text-warning",
                "waiting": "bold $warning",
                "idle": "$text-success",
                "stopped": "$text-error",
            }.get(state, "")
            text = "waiting for you" if state == "waiting" else state
            parts.append(
                Content.assemble(
                    (label, style), " ", (f"{MARKS.get(state, '?')} {text}", mark_style)
                )
            )
        self._listed = Content(" │ ").join(parts)
        self.refresh()

    def render(self) -> Content:
        """The conversations (cut short with an ellipsis when they must), the keys at the
        right."""
        room = self.size.width - SWITCH_KEYS.cell_length - 2
        listed = self._listed
        if listed.cell_length > room:
            listed = listed.truncate(max(room, 0), ellipsis=True)
        return Content.assemble(listed, " " * (room - listed.cell_length + 2), SWITCH_KEYS)
