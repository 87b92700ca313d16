"""The user's prompts and the agent's answers."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.geometry import Size
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
    AgentMessage MarkdownView.-continued {
        margin-top: 1;
    }
    """

    item: Message

    def __init__(self, item: Message, *, id: str | None = None, classes: str | None = None):
        super().__init__(item, id=id, classes=classes)
        self._view = MarkdownView()
        """The Markdown view text is appended to: the last part."""
        self._view.overflow = self._next_view
        self._parts: list[Widget] = [self._view]
        """The views and images, in order."""
        self._children: list[Widget] = [self._view]
        """What this widget holds: the first view, images and the views after them, runs."""
        self._run: PartRun | None = None
        """The run the next continued view goes in, while it has room."""
        self._composed = False
        self._fed = Read()
        """What of the message's content the views were given."""
        self._revision = item.revision
        self._feed()

    def compose(self) -> ComposeResult:
        self._composed = True
        yield from self._children

    def rebind(self, item: Any) -> None:
        self._revision = -1  # no item's: `sync` starts over, as for a replaced message
        super().rebind(item)

    def sync(self, delta: Any = None) -> None:
        if self.item.revision != self._revision:
            # Replaced, not appended to: start over.
            self._revision = self.item.revision
            self._fed = Read()
            first = self._parts[0]
            for child in self._children[1:]:
                child.remove()
            assert isinstance(first, MarkdownView)
            self._view, self._parts, self._children, self._run = first, [first], [first], None
            first.clear()
            first.overflow = self._next_view
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
        after.overflow = self._next_view
        self._parts += [image, after]
        self._children += [image, after]
        self._view, self._run = after, None
        if self._composed:
            self.mount(image, after)

    def _next_view(self, text: str) -> None:
        """Go on in a new Markdown view from `text` (what the last one had not finished):
        only the last view grows, and Textual's cost of a growing widget is its height."""
        view = MarkdownView(text, continued=True, classes="-continued")
        view.overflow = self._next_view
        self._parts.append(view)
        self._view = view
        run = self._run
        if run is not None and run.room:
            run.add(view)
        else:
            self._run = run = PartRun(view)
            self._children.append(run)
            self.mount(run)

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


RUN_PARTS = 16
"""Views of a long answer in one `PartRun`."""


class PartRun(Widget):
    """Views of a long answer, `RUN_PARTS` at most, after one another. Textual arranges a
    container's children all again whenever one of them grows: with every view a child of the
    answer, each frame of a long answer cost in proportion to its length (bench/README.md,
    "Long answers (issue 29)"). In runs, a frame arranges the answer's runs and the views of
    the last run; a run that no longer grows keeps its arrangement."""

    DEFAULT_CSS = """
    PartRun {
        width: 1fr;
        height: auto;
    }
    """
    BLANK = True
    """It draws nothing itself (its views do, over it): Textual's default renders a widget's
    whole height first, thousands of blank lines every frame the last run grows."""

    def __init__(self, first: MarkdownView) -> None:
        super().__init__(first)
        self._views = 1

    @property
    def room(self) -> bool:
        return self._views < RUN_PARTS

    def add(self, view: MarkdownView) -> None:
        self._views += 1
        self.mount(view)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # Textual arranges a container of `height: auto` views at its container's height, a
        # new key of the arrangement cache each frame the answer grows. The views' heights are
        # their own, so a height of 0 arranges them alike and keeps a full run's arrangement.
        return self.arrange(Size(width, 0)).total_region.height
