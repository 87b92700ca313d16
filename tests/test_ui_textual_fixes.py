"""The mends to Textual's rendering: a drawn line leaves no reference cycle behind."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

import acp_tui.ui.app  # noqa: F401  (importing the app applies the mends)


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_a_line_divided_at_its_end_is_freed_by_reference_counting(collector_off: None) -> None:
    strip = Strip([Segment("hello ", Style(bold=True)), Segment("world")])
    assert strip.divide([strip.cell_length]) == [strip]
    del strip
    assert gc.collect() == 0, "the strip was left in a cycle for the collector"


def test_divide_still_cuts_and_caches_real_cuts() -> None:
    strip = Strip([Segment("hello "), Segment("world")])
    left, right = strip.divide([3, 11])
    assert (left.text, right.text) == ("hel", "lo world")
    assert (left.cell_length, right.cell_length) == (3, 8)
    assert strip.divide([3, 11]) is strip.divide([3, 11])
    # Cuts past the end are dropped, as Textual's own divide does.
    assert [part.text for part in strip.divide([5, 11, 20])] == ["hello", " world"]
