"""The mends to Textual's rendering: drawing and laying out leave nothing for a full
collection."""

from __future__ import annotations

import gc
import itertools
import sys
import time

import pytest
from rich.segment import Segment
from rich.style import Style
from textual import _time
from textual.app import App, ComposeResult
from textual.cache import FIFOCache
from textual.containers import VerticalScroll
from textual.strip import Strip
from textual.timer import Timer
from textual.widgets import Static

import acp_tui.ui.app  # noqa: F401  (importing the app applies the mends)

NEVER = 1_000_000_000


def test_a_line_divided_at_its_end_keeps_no_reference_to_itself() -> None:
    """Textual cached `[self]` in the strip: a cycle only a full collection frees."""
    strip = Strip([Segment("hello ", Style(bold=True)), Segment("world")])
    references = sys.getrefcount(strip)
    assert strip.divide([strip.cell_length]) == [strip]
    assert sys.getrefcount(strip) == references


def test_divide_still_cuts_and_caches_real_cuts() -> None:
    strip = Strip([Segment("hello "), Segment("world")])
    left, right = strip.divide([3, 11])
    assert (left.text, right.text) == ("hel", "lo world")
    assert (left.cell_length, right.cell_length) == (3, 8)
    assert strip.divide([3, 11]) is strip.divide([3, 11])
    # Cuts past the end are dropped, as Textual's own divide does.
    assert [part.text for part in strip.divide([5, 11, 20])] == ["hello", " world"]


def test_a_line_makes_its_caches_only_when_it_uses_them() -> None:
    """Textual's `Strip` made seven caches as it was made: most lines never use one, and the
    caches were a quarter of what a full collection walks after a long history is scrolled."""
    # Garbage from earlier tests, collected while the lines are made, would lower the count.
    gc.collect()
    gc.disable()
    try:
        before = sum(isinstance(o, FIFOCache) for o in gc.get_objects())
        lines = [Strip([Segment(f"line {n}")]) for n in range(1000)]
        assert sum(isinstance(o, FIFOCache) for o in gc.get_objects()) == before
    finally:
        gc.enable()
    line = lines[0]
    cropped = line.crop(0, 4)
    assert cropped.text == "line" and line.crop(0, 4) is cropped  # made, then kept
    styled = line.apply_style(Style(bold=True))
    assert styled.text == "line 0" and line.apply_style(Style(bold=True)) is styled
    assert [part.text for part in line.divide([2, 6])] == ["li", "ne 0"]
    assert line.crop_extend(0, 8, None).cell_length == 8
    assert line.extend_cell_length(10).cell_length == 10
    assert sum(isinstance(o, FIFOCache) for o in gc.get_objects()) > before


class Column(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            for number in range(30):
                yield Static(f"line {number}")


async def test_a_layout_leaves_no_garbage_for_the_oldest_generation() -> None:
    """With a young collection at every allocation, one runs while each layout is arranged:
    Textual's arranging closure (and its map of the layout) must not be promoted by it."""
    app = Column()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        thresholds = gc.get_threshold()
        gc.collect()
        gc.set_threshold(1, 1, NEVER)  # young collections all the time, never a full one
        try:
            for _ in range(5):
                app.screen.refresh(layout=True)
                await pilot.pause()
        finally:
            gc.set_threshold(*thresholds)
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            left = [o for o in gc.garbage if getattr(o, "__qualname__", "").endswith("add_widget")]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    assert left == []


class Ticking(App[None]):
    """An interval timer whose first tick runs past the second tick's time."""

    INTERVAL = 0.3

    def __init__(self) -> None:
        super().__init__()
        self.ticks: list[float] = []

    def on_mount(self) -> None:
        self.started = time.monotonic()
        self.set_interval(self.INTERVAL, self.tick)

    def tick(self) -> None:
        self.ticks.append(time.monotonic() - self.started)
        if len(self.ticks) == 1:
            time.sleep(1.5 * self.INTERVAL)  # a frame that took longer than a frame


async def test_a_timer_that_overran_ticks_at_the_next_tick_due() -> None:
    """Ticks are due at 0.3, 0.6, 0.9 s; the first runs to 0.75 s. The next is the one due at
    0.9 s (Textual's own timer skipped to 1.2 s: a frame more after every long frame). The
    bound sits halfway, so a loaded machine has 150 ms of slack either way."""
    app = Ticking()
    async with app.run_test() as pilot:
        while len(app.ticks) < 2:
            await pilot.pause(0.05)
    first, second = app.ticks[:2]
    assert first >= Ticking.INTERVAL
    assert second < 3.5 * Ticking.INTERVAL, app.ticks


async def test_a_one_shot_timer_found_overdue_still_fires(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process descheduled between the timer's two readings of the clock (here the clock
    moves 10 ms a reading, the delay is 1 ms): Textual's timer skipped its only tick, and
    whoever waited for it (a streaming answer's next frame) waited for good. It fires, once."""
    fired: list[int] = []
    clock = itertools.count()
    async with App[None]().run_test() as pilot:
        timer = Timer(pilot.app, 0.001, callback=lambda: fired.append(1), repeat=0)
        monkeypatch.setattr(_time, "get_time", lambda: next(clock) * 0.01)
        await timer._run()
    assert fired == [1]


def test_a_tall_region_is_filed_once_and_still_found() -> None:
    """Textual filed a region in every 20-line cell it covers: a long answer in hundreds,
    every frame it grew."""
    from textual._spatial_map import SpatialMap
    from textual.geometry import Offset, Region

    spatial: SpatialMap[str] = SpatialMap()
    tall, short = Region(0, 0, 80, 50_000), Region(0, 50_000, 80, 10)
    spatial.insert([(tall, Offset(), False, False, "tall"), (short, Offset(), False, False, "x")])
    assert sum(len(values) for values in spatial._map.values()) == 1  # the short one's cell
    assert spatial.total_region == Region(0, 0, 80, 50_010)
    assert "tall" in spatial.get_values_in_region(Region(0, 30_000, 80, 40))
    assert spatial.get_values_in_region(Region(0, 50_000, 80, 5)) == ["tall", "x"]
    assert "x" not in spatial.get_values_in_region(Region(0, 0, 80, 40))


async def test_a_widget_repainted_whole_keeps_no_dirty_line_numbers() -> None:
    """Textual emptied the line cache, then noted every line dirty too: one int per line, for
    a tall widget every frame it grew."""

    class Tall(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield Static("\n".join(f"line {n}" for n in range(2_000)), id="tall")

    app = Tall()
    async with app.run_test(size=(40, 10)) as pilot:
        tall = app.query_one("#tall", Static)
        tall.update("\n".join(f"row {n}" for n in range(3_000)))
        await pilot.pause()
        assert tall.size.height == 3_000
        assert len(tall._styles_cache._dirty_lines) <= 10  # at most what the screen shows
        assert "row 0" in tall.render_line(0).text
