"""The cycle collector at start-up: off until the first frame when the TUI is started from the
command line (`cli.main`), then on, with what start-up made frozen and its garbage freed."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui.ui import collector
from tests.support.pilot import demo_app, demo_workspace, wait_until


@pytest.fixture
def collector_off() -> Iterator[None]:
    """As `cli.main` starts the TUI; afterwards, the collector as it was."""
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.enable()


class Cycle:
    def __init__(self) -> None:
        self.me = self


async def test_the_collector_is_on_after_the_first_frame_and_startup_garbage_freed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector_off: None
) -> None:
    monkeypatch.setattr(collector, "STARTUP_COLLECTION_DELAY", 0.1)
    garbage = weakref.ref(Cycle())  # start-up's garbage: only the collector frees it
    app = demo_app(demo_workspace(tmp_path / "workspace"), tmp_path / "state")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, gc.isenabled, timeout=5)
        assert gc.get_freeze_count() > 0  # what start-up made, out of the young collections
        assert garbage() is None  # collected before the freeze, not kept forever
