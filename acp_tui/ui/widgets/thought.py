"""The agent's reasoning: dimmed, and folded away once the agent has moved on."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Static

from acp_tui.protocol.content import block_text
from acp_tui.session.state import Message, Read
from acp_tui.ui.widgets.block import Block
from acp_tui.ui.widgets.markdown_view import MarkdownView


class Thought(Block):
    """A thought: open while it streams, folded to one line when something follows it (unless
    the user opened it), reopened with Enter or a click."""

    DEFAULT_CSS = """
    Thought {
        padding: 0 1 0 2;
    }
    Thought > .thought--title {
        color: $text-muted;
        text-style: italic;
    }
    Thought > MarkdownView {
        display: none;
        text-opacity: 60%;
        border-left: solid $foreground 15%;
        padding: 0 0 0 1;
        margin: 0 0 0 1;
    }
    Thought.-expanded > MarkdownView {
        display: block;
    }
    """

    item: Message

    def __init__(self, item: Message, *, id: str | None = None, classes: str | None = None):
        super().__init__(item, id=id, classes=classes)
        self._view = MarkdownView()
        self._title = Static(classes="thought--title")
        self._fed = Read()
        self._revision = item.revision
        self.expanded = True
        self._feed()

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._view

    def on_mount(self) -> None:
        self._ready = True
        self._update_title()

    def can_expand(self) -> bool:
        return True

    def watch_expanded(self, expanded: bool) -> None:
        super().watch_expanded(expanded)
        self._update_title()

    def settle(self) -> None:
        """Something came after the thought: fold it, unless the user chose otherwise."""
        if not self.folded_by_user:
            self.expanded = False

    def rebind(self, item: Any) -> None:
        self._revision = -1  # no item's: `sync` starts over, as for a replaced message
        super().rebind(item)

    def take_moved(self, line: int) -> int:
        return self._view.take_moved(line - self.styles.gutter.top - self._title.size.height)

    def sync(self, delta: Any = None) -> None:
        if self.item.revision != self._revision:
            self._revision = self.item.revision
            self._fed = Read()
            self._view.clear()
        self._feed()
        self._update_title()

    def _feed(self) -> None:
        grown, blocks = self._fed.added(self.item.content)
        self._view.append(grown)
        for block in blocks:
            self._view.append(block_text(block))

    def _update_title(self) -> None:
        if not self._ready:
            return
        words = len(self.item.text.split())
        arrow = "▾" if self.expanded else "▸"
        self._title.update(f"{arrow} Thought · {words} words")

    def text(self) -> str:
        return self.item.text
