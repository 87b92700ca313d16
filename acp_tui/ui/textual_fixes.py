"""Mends for Textual's rendering that acp-tui depends on for flat memory.

`Strip.divide` (Textual 8.2) answers a cut at its own end with `[self]` and caches that list
in the strip itself: strip -> cache -> list -> strip, a reference cycle. The compositor divides
every line of every widget it draws, so each frame leaves tens of strips (with their seven
caches and their segments) that reference counting cannot free. Only a full collection frees
them, and the app runs those only when the user is idle (`AcpApp._pace_collector`): a user
holding PageDown through a long history grew the process by 400 MB in five minutes.

The mended `divide` is Textual's, except that the uncut answer is not cached (it costs nothing
to make). `mend()` is idempotent and runs when `acp_tui.ui.app` is imported."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.segment import Segment
from textual.strip import Strip


def _divide(self: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
    cell_length = self.cell_length
    cuts = [cut for cut in cuts if cut <= cell_length]
    if cuts == [cell_length]:
        return [self]
    cache_key = tuple(cuts)
    if (cached := self._divide_cache.get(cache_key)) is not None:
        return cached
    strips: list[Strip] = []
    pos = 0
    for segments, cut in zip(Segment.divide(self._segments, cuts), cuts, strict=False):
        strips.append(Strip(segments, cut - pos))
        pos = cut
    self._divide_cache[cache_key] = strips
    return strips


def mend() -> None:
    Strip.divide = _divide  # type: ignore[method-assign]
