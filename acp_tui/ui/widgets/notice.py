"""Errors, stop reasons and anything the client could not read, as a line in the transcript."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from acp_tui.session.state import Notice
from acp_tui.ui.render.changes import changes_content
from acp_tui.ui.widgets.block import Block

SEVERITY_MARKS = {
    "error": ("✗", "$text-error"),
    "warning": ("!", "$text-warning"),
    "info": ("ℹ", "$text-primary"),  # noqa: RUF001
    "unknown": ("?", "$foreground-muted"),
    "write": ("✎", "$text-success"),
    "auto": ("↳", "$foreground-muted"),
    "answer": ("?", "$text-accent"),
    "rewind": ("↶", "$text-accent"),
    "compaction": ("⇊", "$text-primary"),
}
DETAIL_LINES = 3
"""Lines of detail shown until the notice is expanded."""


class NoticeLine(Block):
    """A notice: a mark, a title, and (dimmed, folded when long) the detail."""

    DEFAULT_CSS = """
    NoticeLine {
        padding: 0 1 0 2;
    }
    NoticeLine.-error {
        background: $error 10%;
        border-left: outer $error;
        padding: 0 1;
    }
    NoticeLine.-unknown, NoticeLine.-auto {
        color: $text-muted;
    }
    NoticeLine > Static {
        width: 1fr;
    }
    """

    item: Notice

    class ChangesWanted(Message):
        """Enter on a turn's `3 files changed` line: show that turn in the changes view."""

        def __init__(self, turn: int) -> None:
            super().__init__()
            self.turn = turn

    def compose(self) -> ComposeResult:
        yield Static()

    def on_mount(self) -> None:
        if not self.composed:
            return
        self._ready = True
        self.add_class(f"-{self.item.severity}")
        self.sync()

    def rebind(self, item: Any) -> None:
        self.remove_class(f"-{self.item.severity}")
        super().rebind(item)
        if self._ready:
            self.add_class(f"-{item.severity}")

    def can_expand(self) -> bool:
        if self.item.severity == "changes":
            return True  # Enter opens the changes view
        if self.item.severity == "write":
            return bool(self.item.detail)
        return (
            len((self.item.detail or "").splitlines()) > DETAIL_LINES
            or len(self.item.detail or "") > 300
        )

    def watch_expanded(self, expanded: bool) -> None:
        super().watch_expanded(expanded)
        self.sync()

    def action_toggle(self) -> None:
        if self.item.severity == "changes":
            self.post_message(self.ChangesWanted(self.item.turn))
        else:
            super().action_toggle()

    def sync(self, delta: Any = None) -> None:
        if not self._ready:
            return
        notice = self.item
        if notice.severity == "changes":
            self.query_one(Static).update(changes_content(notice, self.expanded))
            return
        mark, style = SEVERITY_MARKS.get(notice.severity, ("•", "$foreground-muted"))
        parts: list[Content] = [Content.assemble((f"{mark} ", f"bold {style}"), notice.title)]
        detail = (notice.detail or "").rstrip()
        if notice.severity == "write" and not self.expanded:
            detail = ""  # the tool call shows the diff; the notice keeps it a key away
        if detail:
            if not self.expanded and self.can_expand():
                lines = detail.splitlines()[:DETAIL_LINES]
                detail = "\n".join(line[:300] for line in lines) + "\n… (enter for more)"
            parts.append(Content.styled(detail, "$foreground-muted"))
        self.query_one(Static).update(Content("\n").join(parts))

    def text(self) -> str:
        return "\n".join(p for p in (self.item.title, self.item.detail) if p)


def failure_line(message: str) -> NoticeLine:
    """The line that says the agent could not start (its first line; the rest folded)."""
    first, _, rest = message.partition("\n")
    return NoticeLine(Notice("error", f"The agent could not start: {first}", rest or None))
