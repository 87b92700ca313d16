"""Python's cycle collector, paced for a full-screen app: its full collections out of the
middle of a frame.

A full collection walks every object alive; run by Python on its own schedule it lands
mid-stream and stalls the UI for frames on end (bench/README.md, "Figures behind the code's
choices"). So: freeze what start-up created (it lives as
long as the app), let the young generations be collected as usual (small and quick, but less
often than Python's default), and collect the whole heap only when the user is idle.

`cli.main` starts the app with the collector off: start-up makes objects that live as long as
the app, and Python's collections walked them over and over before the first frame. The few
cycles start-up dropped are collected once, shortly after the first frame, before the freeze
(frozen, they would never be freed). Figures: bench/README.md, "Reached: dialogs on first use,
the footer, the cycle collector".
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

IDLE_BEFORE_FULL_COLLECTION = 2.0
"""Seconds without a key press or mouse event (and no turn running) before a full collection
may run."""
FULL_COLLECTION_EVERY = 30.0
NEVER = 1_000_000_000
"""A full-collection threshold Python never reaches: those run when the user is idle."""
STARTUP_COLLECTION_DELAY = 0.5
"""Seconds from the first frame to the collection of what start-up left, when the app started
with the collector off: the frame is on its way to the terminal by then (a collection holds
the interpreter lock that Textual's writer thread needs)."""
YOUNG_COLLECTION_EVERY = 5_000
"""Allocations between young collections (Python's default: 700): scrolled-away blocks' cycles
are collected young instead of waiting for a full collection, and a young collection stays
short enough not to delay a keystroke."""


class CollectorPace:
    """Paces the collector for one app (`start` after the first frame, `stop` at the end)."""

    def __init__(
        self,
        busy: Callable[[], bool],
        set_interval: Callable[[float, Callable[[], None]], object],
        set_timer: Callable[[float, Callable[[], None]], object],
    ) -> None:
        self._busy = busy
        """Whether a turn runs or an answer is still appearing (no full collection then)."""
        self._set_interval = set_interval
        self._set_timer = set_timer
        self._thresholds: tuple[int, int, int] | None = None
        self._last_input = time.monotonic()
        self._last_full_collection = time.monotonic()

    def start(self) -> None:
        self._thresholds = gc.get_threshold()
        gc.set_threshold(YOUNG_COLLECTION_EVERY, self._thresholds[1], NEVER)
        self._set_interval(1.0, self._collect_when_idle)
        if gc.isenabled():
            gc.freeze()
        else:
            self._set_timer(STARTUP_COLLECTION_DELAY, self._collect_startup)

    def input(self) -> None:
        """The user pressed a key or moved the mouse."""
        self._last_input = time.monotonic()

    def stop(self) -> None:
        gc.unfreeze()
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)

    def _collect_startup(self) -> None:
        gc.collect()
        gc.freeze()
        gc.enable()

    def _collect_when_idle(self) -> None:
        now = time.monotonic()
        idle = now - self._last_input > IDLE_BEFORE_FULL_COLLECTION
        if not self._busy() and idle and now - self._last_full_collection > FULL_COLLECTION_EVERY:
            gc.collect()
            self._last_full_collection = now
