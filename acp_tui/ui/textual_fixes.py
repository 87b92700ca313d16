"""Mends for Textual's rendering that acp-tui depends on for flat memory.

Two kinds of Textual's garbage outlive the young generations, and the app collects the oldest
one only when the user is idle (`AcpApp._pace_collector`): a user holding PageDown through a
long history grew the process by 400 MB in five minutes. Both are cycles that reference
counting cannot free:

- `Strip.divide` (Textual 8.2) answers a cut at its own end with `[self]` and caches that list
  in the strip itself: strip -> cache -> list -> strip. The compositor divides every line of
  every widget it draws, so each frame left tens of strips (with their seven caches and their
  segments) for the collector. The mended `divide` is Textual's, except that the uncut answer
  is not cached (it costs nothing to make).
- `Compositor._arrange_root` places widgets with a nested function that calls itself (a
  cycle) and holds the map of the screen's layout. A young collection that runs while it
  works (one in ten is a collection of the middle generation) promotes the cycle, and with it
  every region of that layout, to the oldest generation, where it waits for a full collection.
  The mend lets no collection start while a layout is arranged; the cycle is then young
  garbage when the next one comes.

`mend()` is idempotent and runs when `acp_tui.ui.app` is imported."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Sequence
from functools import wraps
from typing import Any

from rich.segment import Segment
from textual._compositor import Compositor
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


def _without_collections(arrange: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(arrange)
    def arranged(*args: Any, **kwargs: Any) -> Any:
        if not gc.isenabled():
            return arrange(*args, **kwargs)
        gc.disable()
        try:
            return arrange(*args, **kwargs)
        finally:
            gc.enable()

    arranged.mended = True  # type: ignore[attr-defined]
    return arranged


def mend() -> None:
    Strip.divide = _divide  # type: ignore[method-assign]
    if not getattr(Compositor._arrange_root, "mended", False):
        Compositor._arrange_root = _without_collections(Compositor._arrange_root)  # type: ignore[method-assign]
