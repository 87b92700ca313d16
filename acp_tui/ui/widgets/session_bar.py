"""The session bar: one line listing the open conversations, each with its state (only
shown when there are two or more)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from acp_tui.text import shorten

LABEL_WIDTH = 24
"""A conversation's label is cut to this many cells, so that several fit on the line."""
MARKS = {
    "working": "●",
    "waiting": "◆",
    "idle": "○",
    "stopped": "✗",
}


class SessionBar(Static):
    """`1 Demo ● │ 2 Fix the tests ◆ waiting for you`: the current one highlighted."""

    DEFAULT_CSS = """
    SessionBar {
        height: 1;
        width: 1fr;
        background: $panel-darken-1;
        color: $text-muted;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        display: none;
    }
    SessionBar.-several { display: block; }
    """

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
        self.update(Content(" │ ").join(parts))
