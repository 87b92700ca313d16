"""A tool call as a card: kind icon, title, status pill, locations, and its content (text,
diffs, live terminals, chips), with the raw input and output a keypress away."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Self

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.content import Content
from textual.css.styles import RulesMap
from textual.geometry import Region
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widget import Widget

from acp_tui.protocol.content import (
    ContentBlock,
    ToolCallContent,
    ToolCallLocation,
    block_text,
    image_data,
)
from acp_tui.session.state import SessionState, ToolCallState
from acp_tui.ui.render.chips import chip_text
from acp_tui.ui.widgets.block import Block
from acp_tui.ui.widgets.diff_view import DiffView, relative_path
from acp_tui.ui.widgets.image_view import ImageView
from acp_tui.ui.widgets.markdown_view import MarkdownView
from acp_tui.ui.widgets.quiet_size import quiet_virtual_size
from acp_tui.ui.widgets.render_view import RenderView
from acp_tui.ui.widgets.terminal_view import TerminalView
from acp_tui.ui.widgets.tool_output import (
    RawOutput,
    ToolOutput,
    is_output,
    raw_exit_code,
    raw_output_item,
    runs_command,
)

KIND_ICONS = {
    "read": "◧",
    "edit": "✎",
    "delete": "⌫",
    "move": "⇄",
    "search": "⌕",
    "execute": "❯",  # noqa: RUF001
    "think": "◌",
    "fetch": "⇣",
    "switch_mode": "⇋",
}
STATUS_PILLS = {
    "pending": ("○ pending", "$text-muted on $foreground 8%"),
    "in_progress": ("◐ running", "$text-warning on $warning 15%"),
    "completed": ("✓ done", "$text-success on $success 15%"),
    "failed": ("✗ failed", "$text-error on $error 20%"),
    "cancelled": ("⊘ cancelled", "$text-muted on $foreground 8%"),
    "rejected": ("✗ rejected", "$text-error on $error 12%"),
}
"""The status pill's label and style, by status (another status: its name, pending's style)."""


def inline_code(text: str) -> Content:
    """A one-line title with its `code spans` styled as code (agents write titles in
    Markdown: ``Run `pytest -q` ``)."""
    parts = text.split("`")
    if len(parts) < 3:
        return Content(text)
    pieces: list[Content | tuple[str, str] | str] = []
    for index, part in enumerate(parts):
        if index % 2 and index < len(parts) - 1:
            pieces.append((part, "$text-accent"))
        else:
            pieces.append(part if index % 2 == 0 else f"`{part}")
    return Content.assemble(*pieces)


def location_text(location: ToolCallLocation, root: Path | None) -> str:
    """`src/app.py:12`, or the path alone when there is no line to point at: agents send
    `line: 0` for "the whole file" (Claude's reads), and `app.py:0` points nowhere."""
    path = relative_path(location.path, root)
    line = location.line
    return f"{path}:{line}" if isinstance(line, int) and line > 0 else path


class ToolHead(Widget):
    """A tool call's first line (kind, title, status pill) and its locations below it.

    One widget rather than a row of them: a card is laid out whenever it is mounted, which
    scrolling through a long history does for every page."""

    virtual_size = quiet_virtual_size()

    DEFAULT_CSS = """
    ToolHead {
        width: 1fr;
        height: auto;
        color: $text-muted;
    }
    """

    def __init__(self) -> None:
        super().__init__(classes="tool--head")
        self.kind = Content()
        self.title = Content()
        self.status = Content()
        self.locations = Content()
        self._shown: tuple[str, ...] = ()

    def show(self, call: ToolCallState, root: Path | None) -> None:
        title = call.title or call.name or call.id
        locations = "  ".join(location_text(location, root) for location in call.locations)
        shown = (call.kind, title, call.status, locations)
        if shown == self._shown:
            return  # most updates of a running call change only its content
        lines_changed = locations != (self._shown[3] if self._shown else "")
        self._shown = shown
        icon = KIND_ICONS.get(call.kind, "◆")
        # `other` is the protocol's default, not a kind: the icon alone says "some tool".
        label = icon if call.kind == "other" else f"{icon} {call.kind}"
        self.kind = Content.styled(label, "$accent")
        self.title = inline_code(title).stylize("bold $foreground")
        label, style = STATUS_PILLS.get(call.status, (call.status, STATUS_PILLS["pending"][1]))
        self.status = Content.styled(f" {label} ", style)
        self.locations = Content(locations)  # in the widget's muted colour
        self.refresh(layout=lines_changed)

    def render(self) -> Visual:
        return HeadLines(self.kind, self.title, self.status, self.locations)


class HeadLines(Visual):
    """`ToolHead`'s lines at whatever width they are drawn: the title cut to leave the status
    pill at the right edge, the locations wrapped below. (Its width is not asked of the
    widget: during a layout, that would lay the screen out again to find it.)"""

    def __init__(self, kind: Content, title: Content, status: Content, locations: Content):
        self.kind, self.title, self.status, self.locations = kind, title, status, locations

    def _content(self, width: int) -> Content:
        room = width - self.kind.cell_length - self.status.cell_length - 2
        title = self.title.truncate(max(room, 0), ellipsis=True, pad=True)
        line = Content.assemble(self.kind, " ", title, " ", self.status)
        return Content("\n").join([line, self.locations]) if self.locations else line

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        return self._content(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return container_width

    def get_height(self, rules: RulesMap, width: int) -> int:
        return 1 + (len(self.locations.wrap(width)) if self.locations else 0)


class ToolText(MarkdownView):
    """A `content` item that is text the agent wrote: Markdown, like its messages."""

    def __init__(self, item: ToolCallContent) -> None:
        super().__init__(_content_text(item))
        self._item = item

    def sync(self, item: ToolCallContent) -> None:
        if item is self._item:
            return
        old, new = _content_text(self._item), _content_text(item)
        self._item = item
        if new.startswith(old):
            self.append(new[len(old) :])
        else:
            self.clear()
            self.append(new)


class ToolChip(RenderView):
    """A `content` item that is not text (an image, a resource): a chip."""

    def __init__(self, item: ToolCallContent) -> None:
        self._item = item
        super().__init__(self._chip)

    def _chip(self) -> RenderableType:
        block = self._item.content
        if isinstance(block, ContentBlock):
            return chip_text(block)
        # A content item of a type from the future: say what it is, never drop it.
        return Text(f"◆ {self._item.type}", "acp.muted")

    def sync(self, item: ToolCallContent) -> None:
        if item is not self._item:
            self._item = item
            self.invalidate()


class ToolImage(ImageView):
    """A `content` item that is an image: drawn where the terminal can."""

    def sync(self, item: ToolCallContent) -> None:
        block = _image_block(item)
        if block is not None:
            self.show(block)


def content_views(call: ToolCallState) -> tuple[type[Widget], ...]:
    """The widgets a card shows `call`'s content with, in order: a card released by the
    transcript is shown again for a call of the same shape, with nothing to mount or remove."""
    return tuple(view for _, view in _body(call))


def _body(call: ToolCallState) -> list[tuple[ToolCallContent, type[Widget]]]:
    """The content items a card shows, each with the widget it is shown with."""
    body = [(item, _view_class(call, item)) for item in call.content]
    raw = raw_output_item(call)
    if raw is not None:
        body.append((raw, RawOutput))
    return body


def _view_class(call: ToolCallState, item: ToolCallContent) -> type[Widget]:
    if item.type == "diff":
        return DiffView
    if item.type == "terminal":
        return TerminalView
    if is_output(call, item):
        return ToolOutput
    if _is_text(item):
        return ToolText
    return ToolImage if _image_block(item) is not None else ToolChip


def _image_block(item: ToolCallContent) -> ContentBlock | None:
    block = item.content
    if isinstance(block, ContentBlock) and image_data(block) is not None:
        return block
    return None


def _is_text(item: ToolCallContent) -> bool:
    return isinstance(item.content, ContentBlock) and item.content.type == "text"


def _content_text(item: ToolCallContent) -> str:
    return block_text(item.content) if isinstance(item.content, ContentBlock) else ""


class ToolCallCard(Block):
    """One tool call, patched in place as its updates arrive."""

    DEFAULT_CSS = """
    ToolCallCard {
        border: round $foreground 20%;
        padding: 0 1;
        margin: 1 1 0 1;
    }
    ToolCallCard:focus {
        border: round $accent 70%;
        background: $boost;
    }
    ToolCallCard.-failed { border: round $error 60%; }
    ToolCallCard.-cancelled { border: round $foreground 12%; }
    ToolCallCard.-rejected { border: round $error 30%; }
    ToolCallCard > MarkdownView { margin: 1 0 0 0; }
    ToolCallCard > .tool--raw { margin: 1 0 0 0; }
    """

    item: ToolCallState

    def __init__(
        self,
        item: ToolCallState,
        state: SessionState,
        root: Path | None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(item, id=id)
        self.state = state
        self.root = root
        self._status = ""
        self._raw_view: RenderView | None = None
        """The raw input and output, shown expanded (made when first expanded)."""

    def compose(self) -> ComposeResult:
        # The content's widgets are composed with the card, not mounted by its first `sync`:
        # a card then takes one layout to appear, not one for itself and one for its content.
        yield ToolHead()
        yield from (self._widget_for(item, view) for item, view in _body(self.item))

    def on_mount(self) -> None:
        if not self.composed:
            return
        self._ready = True
        self.sync()

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        # A card's children change (its body mounted or removed: Textual then asks the card
        # for a layout) while one it asked for is still pending. Textual counts a layout only
        # when none is pending, and caches the card's height under that count: a layout run
        # in between (by any other block) measured the card without its body, and that height
        # would be used again. Counting this one too has the card measured again.
        if layout and self._layout_required:
            self._layout_updates += 1
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    # -- state --------------------------------------------------------------------------------

    @property
    def terminal_ids(self) -> set[str]:
        return {
            item.terminal_id
            for item in self.item.content
            if item.type == "terminal" and isinstance(item.terminal_id, str)
        }

    def sync(self, delta: Any = None) -> None:
        if not self._ready:
            return
        call = self.item
        if call.status != self._status:
            self.remove_class(f"-{self._status}")
            self._status = call.status
            self.add_class(f"-{call.status}")
        self.query_one(ToolHead).show(call, self.root)
        self._sync_body()
        self._show_raw()

    def _content_views(self) -> list[Widget]:
        return [child for child in self.children[1:] if child is not self._raw_view]

    def _sync_body(self) -> None:
        children = self._content_views()
        body = _body(self.item)
        for index, (item, view) in enumerate(body):
            if index < len(children):
                child = children[index]
                if type(child) is view:
                    child.sync(item)  # type: ignore[attr-defined]
                    continue
                for stale in children[index:]:
                    stale.remove()
                children = children[:index]
            widget = self._widget_for(item, view)
            self.mount(widget, before=self._raw_view)
            children.append(widget)
        for stale in children[len(body) :]:
            stale.remove()
        self._show_command(children[: len(body)])

    def _show_command(self, views: list[Widget]) -> None:
        """What the views of a command say of it: under its last output, how it ended when
        only the raw output says; in a terminal, whether it runs yet."""
        call = self.item
        outputs = [view for view in views if isinstance(view, ToolOutput)]
        command = runs_command(call)
        code = raw_exit_code(call.raw_output) if command else None
        for output in outputs:
            output.show_command(tail=command, exit_code=code if output is outputs[-1] else None)
        for before, view in zip([None, *views], views, strict=False):
            if isinstance(view, TerminalView):
                view.set_call_status(call.status)
            elif isinstance(view, ToolOutput):
                # Output sent a piece an item (a search's matches): one block, as printed.
                continued = type(before) is type(view) is ToolOutput
                view.set_class(continued, "-continued")

    def _widget_for(self, item: ToolCallContent, view: type[Widget]) -> Widget:
        if view is DiffView:
            diff = DiffView(item, self.root)
            diff.expanded = self.expanded
            return diff
        if view is TerminalView:
            terminal = TerminalView(item, self.state, self._command())
            terminal.expanded = self.expanded
            return terminal
        if issubclass(view, ToolOutput):
            output = view(item)
            output.expanded = self.expanded
            return output
        if view is ToolImage:
            image = _image_block(item)
            assert image is not None
            return ToolImage(image)
        return view(item)  # type: ignore[call-arg]

    def _command(self) -> str | None:
        raw = self.item.raw_input
        command = raw.get("command") if isinstance(raw, dict) else None
        if isinstance(command, list):
            return " ".join(map(str, command))
        return command if isinstance(command, str) else None

    def terminal_changed(self, terminal_id: str) -> None:
        for view in self.query(TerminalView):
            if view.terminal_id == terminal_id:
                view.output_changed()

    # -- Block --------------------------------------------------------------------------------

    def can_expand(self) -> bool:
        return True

    def watch_expanded(self, expanded: bool) -> None:
        super().watch_expanded(expanded)
        if not self._ready:
            return
        for view in self._content_views():
            if isinstance(view, DiffView | TerminalView | ToolOutput):
                view.set_expanded(expanded)
        self._show_raw()

    def _show_raw(self) -> None:
        if self._raw_view is None and self.expanded:
            # Made on first use: most cards are never opened.
            self._raw_view = RenderView(self._raw, classes="tool--raw")
            self.mount(self._raw_view)
        elif self._raw_view is not None:
            self._raw_view.display = self.expanded
            if self.expanded:  # collapsed: drawn again when next expanded
                self._raw_view.invalidate()

    def _raw(self) -> RenderableType:
        call = self.item
        raw = {"input": call.raw_input, "output": call.raw_output}
        raw = {key: value for key, value in raw.items() if value is not None}
        if not raw:
            return Text("no raw input or output", "acp.muted")
        try:
            code = json.dumps(raw, indent=2, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            code = repr(raw)
        assert self._raw_view is not None
        palette = self._raw_view.palette
        from rich.syntax import Syntax  # on first use: see render.lexers

        return Syntax(
            code,
            "json",
            theme=palette.code_theme,
            background_color=palette.code_background,
            word_wrap=True,
        )

    def text(self) -> str:
        parts = [self.item.title]
        for child in self._content_views():
            if isinstance(child, DiffView | TerminalView | ToolOutput):
                parts.append(child.text())
            elif isinstance(child, MarkdownView):
                parts.append(child.source)
        for item in self.item.content:
            if item.type == "content" and not _is_text(item):
                parts.append(f"[{item.type}]")
        return "\n\n".join(p for p in parts if p)
