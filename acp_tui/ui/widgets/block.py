"""What every transcript block shares: it can be focused, expanded, copied and searched.

A block shows one timeline item (a message, a tool call, a plan, a notice) and is patched in
place by `sync` whenever the item changes; it is never re-created for an update.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from acp_tui.ui.widgets.quiet_size import quiet_virtual_size


class Block(Widget):
    """One timeline item in the transcript."""

    can_focus = True

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle", "Expand", show=True),
        Binding("c,y", "copy", "Copy", show=True),
    ]

    DEFAULT_CSS = """
    Block {
        width: 1fr;
        height: auto;
        padding: 0 1;
        margin: 1 0 0 0;
    }
    Block:focus {
        background: $boost;
    }
    """

    _ready = False
    """Set by each block's `on_mount`: before it, the children `sync` patches may not exist."""

    virtual_size = quiet_virtual_size()

    expanded: reactive[bool] = reactive(False)
    """Whether the block shows everything (raw input/output, long diffs, whole terminals)."""

    folded_by_user = False
    """The user opened or closed the block (Enter, a click): the transcript keeps that choice
    for when the block is released and mounted again."""

    class CopyRequested(Message):
        """The user asked to copy a block's text to the clipboard."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, item: Any, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.item = item

    def render_line(self, y: int) -> Strip:
        # A block draws nothing itself (its children do, over it). Textual's default renders
        # the whole height first: thousands of blank lines for a long answer, every frame it
        # grows by one, and as many objects for the cycle collector to walk.
        return Strip.blank(self.size.width, self.visual_style.rich_style)

    @property
    def composed(self) -> bool:
        """Whether its children exist: Textual composes nothing into a block it is already
        removing (one the transcript released as soon as it was mounted)."""
        return bool(self.children)

    def rebind(self, item: Any) -> None:
        """Show `item` instead, as a new block would (the transcript reuses released blocks:
        cheaper than new ones, and no garbage for the collector)."""
        self.item = item
        self.folded_by_user = False
        self.expanded = False
        self.sync()

    def sync(self, delta: Any = None) -> None:
        """The item changed (`delta` is what was appended, when it was an append)."""

    def take_moved(self, line: int) -> int:
        """Lines that heights placed inside the block since the last call added above `line`
        (of the block as it was last laid out): see `Transcript._keep_place`."""
        return 0

    def text(self) -> str:
        """The block's content as plain text, for copying and searching."""
        return ""

    def can_expand(self) -> bool:
        return False

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle":
            return self.can_expand()
        return True

    def action_toggle(self) -> None:
        self.folded_by_user = True
        self.expanded = not self.expanded

    def action_copy(self) -> None:
        self.post_message(self.CopyRequested(self.text()))

    def on_click(self) -> None:
        # The one click handler of every block (Textual calls each class's own `on_click`, so
        # a subclass changes what a click does through `action_toggle`, not another handler).
        if self.can_expand():
            self.action_toggle()
