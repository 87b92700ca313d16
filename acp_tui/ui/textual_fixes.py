"""Mends for Textual that acp-tui depends on for flat memory and prompt frames.

Two kinds of Textual's garbage outlive the young generations, and the app collects the oldest
one only when the user is idle (`acp_tui.ui.collector`): a user holding PageDown through a
long history grew the process for as long as the key was held (bench/README.md, "Scrolling,
third pass: Textual's garbage and Textual's timer"). Both are cycles that reference counting
cannot free:

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

A `Strip` (one line of a widget, tens of thousands of them alive after scrolling through a long
history) made seven caches as it was made, used or not: a quarter of all the objects the
collector tracks, which made the idle full collection of a long history a stall of a few
frames. The mend makes each one on first use, as Textual's own `Content` does its
`_divide_cache`, and the collection a fraction of what it was (bench/README.md, "Scrolling,
fourth pass: a line's seven caches"). It is applied only to the `Strip` it was written for
(the same slots), else Textual is left as is.

A timer that skips the ticks it missed (Textual's screen update timer: frames at 60 Hz) skipped
one more: after a tick that ran past the next one's time, it waited for the tick after that.
So a frame that took longer than a frame (a layout of the transcript, as when blocks are
mounted while paging) delayed the next frame by a whole frame more: a page of a held PageDown
waited a tick longer than it needed to (bench/README.md, "Scrolling, third pass: Textual's
garbage and Textual's timer"). The mended `Timer._run` is Textual's with the next tick counted
from the one due after now. Skipping could also skip a timer's last tick, and so the only tick
of a one-shot timer (`set_timer`) found overdue when it first looked at the clock (a
millisecond's timer on a loaded machine, the process descheduled between its two readings of
the clock): it never fired, and whoever waited for it waited for good. A streaming answer's
next frame (`MarkdownView.flush`) is such a timer: on 2 shared cores at a load of 7-13, an
80,000-chunk answer stopped on screen midway, the app idle, in 2 of 3 runs (bench/README.md,
"Long answers (issue 29)"). The mended loop runs a last tick that is overdue at once, late.

A widget repainted whole (`Widget._set_dirty` with no region: on every resize) empties its
line cache and then also notes every one of its lines as dirty, one int per line in a set:
redundant (an empty cache renders every line anyway), and for a streaming answer thousands of
lines tall, done every frame it grows and kept until those lines are drawn, which most never are
(bench/README.md, "Long answers (issue 29)"). The mended `_set_dirty` is Textual's without that
note.

Textual files each widget of a container's arrangement in every cell of a grid its region
covers (`SpatialMap.insert`, cells of 20 lines), to find the ones in view quickly. A long answer
thousands of lines tall was filed in hundreds of cells, and its arrangement made again (and the
old one freed) every frame it grew: 10% of an 80,000-chunk answer's time (bench/README.md,
"Long answers (issue 29)"). The mended `insert` files a region taller than `TALL_CELLS` cells
once, in the list every query returns (as Textual does for fixed widgets): the map's answer is
a superset either way, which its one caller (`DockArrangeResult.get_visible_placements`) culls
by overlap.

`mend()` is idempotent and runs when `acp_tui.ui.app` is imported."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Sequence
from functools import wraps
from typing import Any

from rich.segment import Segment
from textual import _time
from textual._compositor import Compositor
from textual._spatial_map import SpatialMap
from textual.cache import FIFOCache
from textual.geometry import Offset, Region
from textual.strip import Strip
from textual.timer import EventTargetGone, Timer
from textual.widget import Widget


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


_STRIP_CACHES = {
    "_divide_cache": 4,
    "_crop_cache": 16,
    "_style_cache": 16,
    "_filter_cache": 4,
    "_line_length_cache": 4,
    "_crop_extend_cache": 4,
    "_offsets_cache": 4,
}
"""The caches Textual 8's `Strip.__init__` makes, with their sizes."""
_STRIP_SLOTS = {
    *_STRIP_CACHES,
    "_segments",
    "_cell_length",
    "_render_cache",
    "_link_ids",
    "_cell_count",
}


def _strip_init(self: Strip, segments: Iterable[Segment], cell_length: int | None = None) -> None:
    """Textual's `Strip.__init__`, without making the caches."""
    self._segments = list(segments)
    self._cell_length = cell_length
    self._render_cache = None
    self._link_ids = None
    self._cell_count = None


def _made_on_first_use(name: str, maxsize: int) -> property:
    """A `Strip` cache that is made the first time it is asked for, kept in its own slot."""
    slot = Strip.__dict__[name]
    get, put = slot.__get__, slot.__set__

    def cache(strip: Strip) -> FIFOCache[Any, Any]:
        try:
            return get(strip, Strip)  # type: ignore[no-any-return]
        except AttributeError:
            made: FIFOCache[Any, Any] = FIFOCache(maxsize)
            put(strip, made)
            return made

    return property(cache)


def _mend_strip_caches() -> None:
    if Strip.__init__ is _strip_init or set(Strip.__slots__) != _STRIP_SLOTS:
        return
    for name, maxsize in _STRIP_CACHES.items():
        setattr(Strip, name, _made_on_first_use(name, maxsize))
    Strip.__init__ = _strip_init  # type: ignore[method-assign]


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


async def _run(self: Timer) -> None:
    count = 0
    repeat = self._repeat
    interval = self._interval
    await self._active.wait()
    start = _time.get_time()
    while repeat is None or count <= repeat:
        next_timer = start + ((count + 1) * interval)
        now = _time.get_time()
        if self._skip and next_timer < now:
            count = int((now - start) / interval)  # Textual's: `+ 1`, a tick too far
            if repeat is None or count <= repeat:
                continue
            count = repeat  # Textual's skipped the last tick too: it runs now, late
        await _time.sleep(max(0, next_timer - _time.get_time()))
        count += 1
        await self._active.wait()
        if self._reset:
            start = _time.get_time()
            count = 0
            self._reset = False
            continue
        try:
            await self._tick(next_timer=next_timer, count=count)
        except EventTargetGone:
            break


def _set_dirty(self: Widget, *regions: Region) -> None:
    if regions:
        content_offset = self.content_offset
        widget_regions = [region.translate(content_offset) for region in regions]
        self._dirty_regions.update(widget_regions)
        self._repaint_regions.update(widget_regions)
        self._styles_cache.set_dirty(*widget_regions)
    else:
        self._dirty_regions.clear()
        self._repaint_regions.clear()
        self._styles_cache.clear()  # Textual's then marks every line dirty: see the module
        outer_size = self.outer_size
        self._dirty_regions.add(outer_size.region)
        if outer_size:
            self._repaint_regions.add(outer_size.region)


TALL_CELLS = 8
"""Grid cells (20 lines each) past which a region is filed once, not in every cell: a screen
or two, so anything taller is in view often enough that returning it every time costs less
than filing it."""


def _insert(
    self: SpatialMap[Any], regions_and_values: Iterable[tuple[Region, Offset, bool, bool, Any]]
) -> None:
    append_always = self._fixed.append
    get_grid_list = self._map.__getitem__
    _region_to_grid = self._region_to_grid_coordinates
    grid_height = self._grid_size[1]
    total_region = self.total_region
    for region, offset, fixed, overlay, value in regions_and_values:
        if fixed:
            append_always(value)
            continue
        if not overlay:
            total_region = total_region.union(region)
        if region.height > TALL_CELLS * grid_height:
            append_always(value)  # Textual's: filed in each of its cells
        else:
            for grid in _region_to_grid(region + offset):
                get_grid_list(grid).append(value)
    self.total_region = total_region


def mend() -> None:
    SpatialMap.insert = _insert  # type: ignore[method-assign]
    Widget._set_dirty = _set_dirty  # type: ignore[method-assign]
    Strip.divide = _divide  # type: ignore[method-assign]
    _mend_strip_caches()
    Timer._run = _run  # type: ignore[method-assign]
    if not getattr(Compositor._arrange_root, "mended", False):
        Compositor._arrange_root = _without_collections(Compositor._arrange_root)  # type: ignore[method-assign]
