"""Text cut to fit a column, the cut marked."""

from __future__ import annotations


def shorten(text: str, width: int) -> str:
    """`text` if it fits in `width` characters, else its start and an ellipsis, `width` in
    all."""
    return text if len(text) <= width else text[: max(width - 1, 0)].rstrip() + "…"
