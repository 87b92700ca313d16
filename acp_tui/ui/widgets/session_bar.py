"""The session bar: one line listing the open conversations, each with its state, or what it
needs of the user (the inbox: `acp_tui.ui.inbox`), and the keys that switch between them (only
shown when there are two or more)."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from acp_tui.text import shorten

LABEL_WIDTHS = (24, 16, 10)
"""A conversation's label is cut to the first of these widths at which they all fit on the line
(past the first, a state says only its mark; what a conversation needs is always said)."""
STATES = {
    "working": ("●", "working", "$text-warning"),
    "waiting": ("◆", "waiting for you", "bold $warning"),
    "idle": ("○", "idle", "$text-success"),
    "stopped": ("✗", "stopped", "$text-error"),
    # What a conversation needs of the user: it stands out.
    "permission": ("◆", "permission", "bold $warning"),
    "question": ("◆", "question", "bold $warning"),
    "budget": ("■", "budget reached", "bold $error"),
    "failed": ("✗", "failed", "bold $error"),
    "done": ("✔", "done", "bold $success"),
}
"""A state's (or a need's) mark, words and style."""
PLAIN = ("working", "waiting", "idle", "stopped")
"""The states that are not something the conversation needs of the user."""
SWITCH_KEYS = Content.assemble(("alt+← →", "bold $text-accent"), " switch")
"""The switching keys that come through tmux and every terminal (Alt+digit does not)."""
WAITING_KEY = Content.assemble(("ctrl+g", "bold $text-accent"), " waiting  ")
"""Shown while a conversation needs the user."""


class SessionBar(Widget):
    """`1 Demo ● working │ 2 Fix the tests ◆ permission     ctrl+g waiting  alt+← → switch`:
    the current one highlighted."""

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
        self._items: list[tuple[str, str, bool]] = []
        self._keys = SWITCH_KEYS

    def show(self, items: list[tuple[str, str, bool]]) -> None:
        """`items`: (label, state or need, current) per conversation, in order."""
        self.set_class(len(items) > 1, "-several")
        self._items = items
        waiting = any(state not in PLAIN for _, state, _ in items)
        self._keys = WAITING_KEY + SWITCH_KEYS if waiting else SWITCH_KEYS
        self.refresh()

    def _listed(self, width: int) -> Content:
        """The conversations, each label cut to `width` cells."""
        parts: list[Content] = []
        for label, state, current in self._items:
            style = "bold $text-accent" if current else ""
            mark, text, mark_style = STATES.get(state, ("?", state, ""))
            said = mark if state in PLAIN and width < LABEL_WIDTHS[0] else f"{mark} {text}"
            parts.append(Content.assemble((shorten(label, width), style), " ", (said, mark_style)))
        return Content(" │ ").join(parts)

    def render(self) -> Content:
        """The conversations (their labels cut shorter, then the whole cut short with an
        ellipsis, when they must), the keys at the right."""
        room = self.size.width - self._keys.cell_length - 2
        for width in LABEL_WIDTHS:
            listed = self._listed(width)
            if listed.cell_length <= room:
                break
        else:
            listed = listed.truncate(max(room, 0), ellipsis=True)
        return Content.assemble(listed, " " * (room - listed.cell_length + 2), self._keys)
