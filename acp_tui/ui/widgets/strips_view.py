"""A widget that shows pre-rendered lines through the Line API.

Rich renders content once per width into `Strip`s; the widget answers `render_line` from that
list, so scrolling and repainting never re-render Rich content, and a height query costs a
`len()`. Subclasses say how to build the lines (`build_lines`) and call `invalidate` when their
content changes.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from acp_tui.ui.render.palette import Palette, palette_for
from acp_tui.ui.widgets.quiet_size import quiet_virtual_size


def render_strips(palette: Palette, renderable: RenderableType, width: int) -> list[Strip]:
    """`renderable` as lines `width` cells wide at most, blank lines around it dropped (the
    caller spaces blocks itself)."""
    lines = palette.console.render_lines(renderable, palette.options(width), pad=False)
    strips = [Strip(line) for line in lines]
    while strips and not strips[-1].text.strip():
        strips.pop()
    start = 0
    while start < len(strips) and not strips[start].text.strip():
        start += 1
    return strips[start:] if start else strips


BLANK = Strip([Segment("")], 0)


class StripsView(Widget):
    """Lines rendered once per width, shown through `render_line`."""

    virtual_size = quiet_virtual_size()

    DEFAULT_CSS = """
    StripsView {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._lines: list[Strip] = []
        self._lines_width = -1
        """The width `_lines` were built for; -1 when they must be rebuilt."""
        self._base_style: Style | None = None
        """`rich_style` as of the paint under way (see `render_lines`)."""

    @property
    def palette(self) -> Palette:
        app = self.app
        theme = app.current_theme
        return palette_for(theme.name, app.theme_variables, theme.dark)

    def build_lines(self, width: int) -> list[Strip]:
        """Render the whole content at `width`."""
        raise NotImplementedError

    def lines_for(self, width: int) -> list[Strip]:
        if width != self._lines_width:
            self._lines = self.build_lines(max(1, width))
            self._lines_width = width
        return self._lines

    def invalidate(self) -> None:
        """The content changed: rebuild the lines on the next paint and re-measure."""
        self._lines_width = -1
        self.refresh(layout=True)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.invalidate())

    def on_unmount(self) -> None:
        # The signal keeps its callback, and the callback keeps the widget: a released
        # transcript block would live as long as the app.
        self.app.theme_changed_signal.unsubscribe(self)

    def get_content_width(self, container: object, viewport: object) -> int:
        width = getattr(container, "width", 80)
        return max((strip.cell_length for strip in self.lines_for(width)), default=0)

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return len(self.lines_for(width))

    @property
    def base_style(self) -> Style:
        """The style every line is drawn over: the widget's colours and text style."""
        return self.rich_style if self._base_style is None else self._base_style

    def render_lines(self, crop: Region) -> list[Strip]:
        # `rich_style` walks every ancestor's styles (bench/README.md, "Figures behind the
        # code's choices"): once a paint, not once a line. A streaming view repaints all its
        # visible lines each frame, since Textual drops a widget's line cache whenever its size
        # changes.
        self._base_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._base_style = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        lines = self.lines_for(width)
        base = self.base_style
        if 0 <= y < len(lines):
            return lines[y].apply_style(base)
        return Strip.blank(width, base)
