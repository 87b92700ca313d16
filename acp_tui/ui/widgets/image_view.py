"""An image from the agent: drawn where the terminal can, else (or until then) a chip.

The chip shows at once; when the terminal draws pictures (see `render.pictures`), the image is
decoded in a thread and the picture takes the chip's place. A broken or huge image stays a chip
that says why.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.widget import Widget

from acp_tui.protocol.content import ContentBlock, image_data
from acp_tui.protocol.images import ImageError, inspect_data, too_large_to_show
from acp_tui.ui.render.chips import chip_text
from acp_tui.ui.render.pictures import (
    Mode,
    Picture,
    load_picture,
    load_textual_image,
    picture_mode,
    picture_widget,
)
from acp_tui.ui.widgets.render_view import RenderView


class ImageView(Widget):
    """One image block (an `image`, or a `resource` whose blob is an image)."""

    DEFAULT_CSS = """
    ImageView {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(self, block: ContentBlock, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.block = block
        self.note: str | None = None
        """Why the picture is not drawn (broken, too large), shown after the chip."""
        self.drawn = False
        """The picture is on screen (not the chip)."""

    def compose(self) -> ComposeResult:
        yield RenderView(self._chip)

    def on_mount(self) -> None:
        self._draw()

    def show(self, block: ContentBlock) -> None:
        """Show `block` instead (a tool call's content replaced)."""
        if block is self.block:
            return
        self.block, self.note, self.drawn = block, None, False
        self.remove_children()
        self.mount(RenderView(self._chip))
        self._draw()

    def _chip(self) -> Text:
        return chip_text(self.block, self.note)

    def _draw(self) -> None:
        mode = picture_mode(self.app.is_headless)
        picture = image_data(self.block)
        if mode is None or picture is None:
            return
        try:
            if too_large_to_show(inspect_data(picture[0])) is not None:
                return  # the chip says so
        except ImageError:
            return  # broken: the chip says so
        self._decode(mode, self.block, picture[0])

    # Not exit_on_error: an image from an agent, however broken, must not end the app (and the
    # app may be closing when the thread ends).
    @work(thread=True, group="picture", exit_on_error=False)
    def _decode(self, mode: Mode, block: ContentBlock, data: str) -> None:
        # In a thread: decoding (and the first import of textual-image and Pillow) takes a while.
        try:
            picture = load_picture(data, mode)
            load_textual_image()
        except ImageError as error:
            self.app.call_from_thread(self._undrawable, block, str(error))
        except Exception as error:
            # A bug of ours or of a library's, on bytes no one has tried: the chip says so.
            reason = f"cannot be drawn: {type(error).__name__}: {error}"
            self.app.call_from_thread(self._undrawable, block, reason)
        else:
            self.app.call_from_thread(self._drawn, mode, block, picture)

    def _drawn(self, mode: Mode, block: ContentBlock, picture: Picture) -> None:
        if block is not self.block or not self.is_attached:
            return
        self.remove_children()
        self.mount(picture_widget(mode, picture))
        self.drawn = True

    def _undrawable(self, block: ContentBlock, reason: str) -> None:
        if block is not self.block or not self.is_attached:
            return
        self.note = reason
        for view in self.query(RenderView):
            view.invalidate()
