"""A finished part of a `MarkdownView`'s message, and its height guessed without rendering it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.strip import Strip

from acp_tui.protocol.content import ContentBlock
from acp_tui.ui.render.strip_cache import STRIPS
from acp_tui.ui.widgets.heights import wrapped_lines

if TYPE_CHECKING:
    from acp_tui.ui.render.markdown import Parsed

ESTIMATE_WIDTH = 8
"""The narrowest text an estimate assumes, so that a view not laid out yet (no width) does not
guess a line per character."""


@dataclass(slots=True, eq=False)
class Piece:
    """A finished part of the message: one Markdown block, or a chip."""

    markdown: str | None = None
    parsed: Parsed | None = None
    """The parse of `markdown`, kept only until the first render (and not by an estimate)."""
    chip: ContentBlock | None = None
    height: int = 0
    lines: list[Strip] | None = None
    top: int = 0
    """The piece's first line in the widget (blank separator lines included)."""
    estimated: bool = False
    """`height` is a guess: the piece scrolled past unseen in a flood, never rendered."""
    several: bool = False
    """`markdown` is several blocks, skimmed in a flood (`MarkdownView._skim`): each is
    rendered as a piece of its own would be, one blank line apart."""


def extent(piece: Piece, previous: Piece | None, height: int) -> int:
    """The lines `piece` takes in its view at `height`, with the blank line before it (none
    before the first piece or an empty one, nor between two chips)."""
    if previous is None or not height:
        return height
    return height + (0 if piece.chip is not None and previous.chip is not None else 1)


def estimate(piece: Piece, width: int) -> int:
    """About how many lines `piece` takes: its lines, wrapped at `width`, less a fence's
    delimiters (its language shows as a label), plus a top heading's rule; a table's rows
    do not wrap (Rich narrows the columns instead)."""
    lines = (piece.markdown or "").strip("\n").split("\n")
    if piece.several:
        return wrapped_lines(lines, max(ESTIMATE_WIDTH, width - 4))
    first = lines[0]
    if first.startswith(("```", "~~~")):
        code = lines[1:-1] if len(lines) > 1 and lines[-1].startswith(first[:3]) else lines[1:]
        label = 1 if first[3:].strip() else 0
        return label + wrapped_lines(code, max(ESTIMATE_WIDTH, width - 2))
    if first.startswith("|"):
        return len(lines)
    heading_rule = 1 if first.startswith("# ") else 0
    return wrapped_lines(lines, max(ESTIMATE_WIDTH, width - 4)) + heading_rule


def estimate_again(piece: Piece, width: int) -> None:
    """`piece`'s rendered lines dropped, its height estimated at `width`."""
    STRIPS.forget(piece)
    piece.lines, piece.parsed = None, None
    piece.estimated = True
    piece.height = estimate(piece, width)
