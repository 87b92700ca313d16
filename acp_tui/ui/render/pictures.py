"""Whether and how the terminal draws pictures, and images decoded for drawing.

`textual-image` draws with Kitty's graphics protocol or Sixel. It finds out which one the
terminal speaks by asking it when imported: it writes a query and reads the answer from stdin.
Once Textual runs, Textual's input thread reads stdin, so the answer would be lost and the
query would stall; and importing it (with Pillow) at start-up would slow the first frame. So
acp-tui picks the protocol from the environment, and imports `textual-image` only when the
first picture is drawn, with a stdout that says it is no terminal, which skips its queries.

`ACP_TUI_IMAGES` overrides the choice: `kitty`, `sixel`, `halfcell` (coloured half blocks,
which any true-colour terminal shows, and SVG screenshots too) or `off`.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import importlib
import io
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from acp_tui.protocol.images import (
    ImageError,
    ImageInfo,
    decode_data,
    inspect,
    too_large_to_show,
)

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage
    from textual.widget import Widget

Mode = Literal["kitty", "sixel", "halfcell"]
MODES: tuple[Mode, ...] = ("kitty", "sixel", "halfcell")
MAX_ROWS = 12
"""Rows a picture may take in the transcript (it keeps its aspect within them)."""
MIN_ROWS = 4
DRAW_PIXELS = 1024
"""Pictures are scaled down to this many pixels on their long side before drawing: a terminal
cell is some 10×20 pixels, so more is never seen, and encoding it for the terminal costs."""  # noqa: RUF001
PICTURES_KEPT = 8
"""Pictures kept decoded: one scrolled out of the transcript and back is not decoded again."""
SIXEL_TERMINALS = frozenset({"WezTerm", "iTerm.app", "mintty", "contour"})
SIXEL_TERM_PREFIXES = ("foot", "mlterm", "contour", "yaft")


def picture_mode(headless: bool, environ: Mapping[str, str] = os.environ) -> Mode | None:
    """How pictures are drawn here, or None: as chips. Headless (tests, screenshots), only
    the half-block drawing can be asked for: the others write to the real terminal."""
    asked = environ.get("ACP_TUI_IMAGES", "").strip().lower()
    if asked == "off":
        return None
    if asked in MODES:
        return asked if (asked == "halfcell" or not headless) else None  # type: ignore[return-value]
    if headless or environ.get("TMUX"):
        return None  # tmux passes neither protocol through by default
    term, program = environ.get("TERM", ""), environ.get("TERM_PROGRAM", "")
    if term == "xterm-kitty" or "KITTY_WINDOW_ID" in environ or program == "ghostty":
        return "kitty"
    if (
        program in SIXEL_TERMINALS
        or term.startswith(SIXEL_TERM_PREFIXES)
        or "KONSOLE_VERSION" in environ
        or "WT_SESSION" in environ
    ):
        return "sixel"
    return None


class Picture(msgspec.Struct, frozen=True):
    """An image ready to draw: its pixels (scaled down) and the rows it takes."""

    image: PILImage
    rows: int


def load_picture(data: str, mode: Mode) -> Picture:
    """Decode an image block's base64 `data` for drawing in `mode`, or an `ImageError` saying
    why not: `broken image: …` or `too large to show: …`. The last few are kept, by a digest
    of `data`: the strings themselves could be megabytes each, alive after their blocks."""
    key = (hashlib.blake2b(data.encode(errors="surrogatepass"), digest_size=16).digest(), mode)
    with _KEEPING:
        picture = _KEPT.get(key)
        if picture is not None:
            _KEPT.move_to_end(key)
            return picture
    picture = _decode_picture(data, mode)
    with _KEEPING:
        _KEPT[key] = picture
        while len(_KEPT) > PICTURES_KEPT:
            _KEPT.popitem(last=False)
    return picture


_KEPT: OrderedDict[tuple[bytes, Mode], Picture] = OrderedDict()
_KEEPING = threading.Lock()  # pictures are decoded in threads


def _decode_picture(data: str, mode: Mode) -> Picture:
    try:
        raw = decode_data(data)
        info = inspect(raw)
    except ImageError as error:
        raise ImageError(f"broken image: {error}") from None
    too_large = too_large_to_show(info)
    if too_large is not None:
        raise ImageError(f"too large to show: {too_large}")
    image = _pixels(raw, info)
    # Its own size where it fits; half blocks draw two pixels a row, so small pictures there
    # are as tall as they can be shown sharp.
    cell_height = 2 if mode == "halfcell" else cell_size()[1]
    rows = max(MIN_ROWS, min(MAX_ROWS, -(-info.height // cell_height)))
    return Picture(image, rows)


def _pixels(raw: bytes, info: ImageInfo) -> PILImage:
    """The image decoded by Pillow and scaled down for drawing, or an `ImageError`."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as opened:
            # Pillow's size can exceed the header's (a GIF's first frame may be larger than
            # its logical screen): check it before a pixel is decoded.
            opened_info = ImageInfo(info.mime_type, opened.width, opened.height, info.size)
            too_large = too_large_to_show(opened_info)
            if too_large is not None:
                raise ImageError(f"too large to show: {too_large}")
            opened.draft("RGB", (DRAW_PIXELS, DRAW_PIXELS))  # JPEG: decode at a smaller scale
            image = opened.convert("RGBA" if "A" in opened.getbands() else "RGB")
        image.thumbnail((DRAW_PIXELS, DRAW_PIXELS))
    except ImageError:
        raise
    except UnidentifiedImageError:
        raise ImageError("broken image: Pillow cannot read it") from None
    except Exception as error:
        # Bytes from an agent: Pillow's plugins raise more than OSError and ValueError on bad
        # ones (`SyntaxError: broken PNG file`, struct.error, ...), and none may end the app.
        raise ImageError(f"broken image: {error}") from None
    return image


def picture_widget(mode: Mode, picture: Picture) -> Widget:
    """A `textual-image` widget drawing `picture` in `mode`, `picture.rows` high."""
    widgets = load_textual_image()
    kind: Any = {
        "kitty": widgets.TGPImage,
        "sixel": widgets.SixelImage,
        "halfcell": widgets.HalfcellImage,
    }[mode]
    widget: Widget = kind(picture.image)
    widget.styles.height = picture.rows
    widget.styles.width = "auto"
    return widget


def cell_size() -> tuple[int, int]:
    """A terminal cell's (width, height) in pixels, as the terminal says, else 10×20."""  # noqa: RUF002
    with contextlib.suppress(ImportError, OSError, ValueError, AttributeError):
        import fcntl  # POSIX only
        import termios

        size = array.array("H", [0, 0, 0, 0])
        fcntl.ioctl(sys.__stdout__.fileno(), termios.TIOCGWINSZ, size)  # type: ignore[union-attr]
        rows, columns, width, height = size
        if rows and columns and width and height:
            return width // columns, height // rows
    return 10, 20


_IMPORTING = threading.Lock()


class _NotATerminal:
    """What `sys.__stdout__` looks like while `textual-image` is imported."""

    def isatty(self) -> bool:
        return False


def load_textual_image() -> ModuleType:
    """`textual_image.widget`, imported the first time (see above for how). Pictures are
    decoded in threads: the lock keeps a second one from seeing a half-imported module."""
    with _IMPORTING:
        if "textual_image.widget" not in sys.modules:
            real, sys.__stdout__ = sys.__stdout__, _NotATerminal()  # type: ignore[assignment]
            try:
                importlib.import_module("textual_image.widget")
            finally:
                sys.__stdout__ = real
            from textual_image import _terminal

            # It measured the cell without a terminal; the real size keeps pictures' aspect.
            _terminal.get_cell_size._result = _terminal.CellSize(*cell_size())  # type: ignore[attr-defined]
    return sys.modules["textual_image.widget"]
