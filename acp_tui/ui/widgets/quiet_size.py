"""A `virtual_size` whose changes do not lay the screen out again.

Textual's `virtual_size` asks for a layout of the whole screen whenever it changes, and it
changes during a layout: after every widget's first one, and for the transcript whenever the
blocks it holds are measured. Each batch of blocks scrolled into reach was laid out twice.
A widget that never scrolls has no use for it, and the transcript's scrollbars are updated
by Textual directly when its size is (its watcher still runs).
"""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive


def quiet_virtual_size() -> Reactive[Size]:
    """`virtual_size = quiet_virtual_size()` in a widget class (see the module)."""
    return Reactive(Size(0, 0), layout=False)
