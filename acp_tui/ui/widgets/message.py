"""The user's prompts and the agent's answers."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget

from acp_tui.protocol.content import ContentBlock, block_text, image_data
from acp_tui.session.state import Message, Read
from acp_tui.ui.render.chips import chip_text
from acp_tui.ui.widgets.block import Block
from acp_tui.ui.widgets.image_view import ImageView
from acp_tui.ui.widgets.markdown_view import MarkdownView
from acp_tui.ui.widgets.render_view import RenderView


class UserMessage(Block):
    """A prompt as the user sent it: plain text (what they typed, not rendered Markdown) and a
    chip for each file or image attached."""

    DEFAULT_CSS = """
    UserMessage {
        background: $boost;
        border-left: outer $accent;
        padding: 0 1;
    }
    UserMessage:focus {
        background: $boost-lighten-2;
        border-left: outer $accent-lighten-2;
    }
    """

    item: Message

    def __init__(self, item: Message, *, id: str | None = None, classes: str | None = None):
        super().__init__(item, id=id, classes=classes)
        self._view = RenderView(self._content)

    def compose(self) -> ComposeResult:
        yield self._view

    def _content(self) -> RenderableType:
        parts: list[RenderableType] = []
        text = "".join(block_text(block) for block in self.item.content)
        if text:
            parts.append(Text(text.rstrip("\n")))
        parts.extend(chip_text(block) for block in self.item.content if block.type != "text")
        return Group(*parts)

    def sync(self, delta: Any = None) -> None:
        self._view.invalidate()

    def text(self) -> str:
        return self.item.text


class AgentMessage(Block):
    """The agent's answer: streaming Markdown, chips for anything that is not text, and the
    images in it drawn between the Markdown where the terminal can (each image ends one
    Markdown view and starts the next)."""

    DEFAULT_CSS = """
    AgentMessage {
        padding: 0 1 0 2;
    }
    AgentMessage > ImageView {
        margin: 1 0;
    }
    AgentMessage > ImageView.-leading {
        margin-top: 0;
    }
    """

    item: Message

    def __init__(self, item: Message, *, id: str | None = None, classes: str | None = None):
        super().__init__(item, id=id, classes=classes)
        self._view = MarkdownView()
        """The Markdown view text is appended to: the last part."""
        self._parts: list[Widget] = [self._view]
        """The views and images, in order."""
        self._composed = False
        self._fed = Read()
        """What of the message's content the views were given."""
        self._revision = item.revision
        self._feed()

    def compose(self) -> ComposeResult:
        self._composed = True
        yield from self._parts

    def rebind(self, item: Any) -> None:
        self._revision = -1  # no item's: `sync` starts over, as for a replaced message
        super().rebind(item)

    def sync(self, delta: Any = None) -> None:
        if self.item.revision != self._revision:
            # Replaced, not appended to: start over.
            self._revision = self.item.revision
            self._fed = Read()
            first = self._parts[0]
            for part in self._parts[1:]:
                part.remove()
            assert isinstance(first, MarkdownView)
            self._view, self._parts = first, [first]
            first.clear()
        self._feed()

    def _feed(self) -> None:
        grown, blocks = self._fed.added(self.item.content)
        self._view.append(grown)
        for block in blocks:
            if block.type == "text":
                self._view.append(block_text(block))
            elif image_data(block) is not None:
                self._add_image(block)
            else:
                self._view.add_chip(block)

    def _add_image(self, block: ContentBlock) -> None:
        leading = len(self._parts) == 1 and not self._view.source.strip()
        image, after = ImageView(block, classes="-leading" if leading else None), MarkdownView()
        self._parts += [image, after]
        self._view = after
        if self._composed:
            self.mount(image, after)

    def take_moved(self, line: int) -> int:
        # Asked of every block each time the transcript is arranged (each frame of a stream):
        # the parts' places are looked up only when one of them moved.
        if not any(view.moved for view in self._markdown()):
            return 0
        top, moved = self.styles.gutter.top, 0
        for part in self._parts:
            if isinstance(part, MarkdownView):
                moved += part.take_moved(line - top)
            # Views have no margin: the images' are the gaps between the parts.
            top += part.styles.margin.top + part.size.height + part.styles.margin.bottom
        return moved

    def _markdown(self) -> list[MarkdownView]:
        return [part for part in self._parts if isinstance(part, MarkdownView)]

    def flush(self) -> None:
        for view in self._markdown():
            view.flush()

    @property
    def settled(self) -> bool:
        return all(view.settled for view in self._markdown())

    def text(self) -> str:
        return self.item.text
