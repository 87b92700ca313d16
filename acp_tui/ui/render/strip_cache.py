"""A budget for rendered lines kept in memory, shared by every transcript widget.

Rendered lines are many small objects (a `Strip` per line, a `Segment` per styled run). Kept for
a whole long session they cost memory, and worse, Python's cycle collector walks all of them on
every full collection: with a long session's lines kept, a collection stalls the UI for
several frames. So a finished piece keeps only its height; its lines are kept while recently
shown, up to a global line budget, and rendered again (cheaply) when scrolled back to
(bench/README.md, "Figures behind the code's choices").
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol

from textual.strip import Strip


class Evictable(Protocol):
    lines: list[Strip] | None


class StripCache:
    """Least-recently-shown pieces keep their lines; the rest drop them."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._entries: OrderedDict[int, Evictable] = OrderedDict()
        self._sizes: dict[int, int] = {}
        self.size = 0

    def touch(self, piece: Evictable) -> None:
        """`piece` was just rendered or shown: keep it, evict the oldest beyond the budget."""
        key = id(piece)
        if key in self._entries:
            self._entries.move_to_end(key)
            return
        size = len(piece.lines or ())
        self._entries[key] = piece
        self._sizes[key] = size
        self.size += size
        while self.size > self.budget and len(self._entries) > 1:
            old_key, old = self._entries.popitem(last=False)
            self.size -= self._sizes.pop(old_key)
            old.lines = None

    def forget(self, piece: Evictable) -> None:
        key = id(piece)
        if self._entries.pop(key, None) is not None:
            self.size -= self._sizes.pop(key)


STRIPS = StripCache(budget=1500)
"""Lines kept across the whole transcript: a few screens' worth, whatever the session length."""
