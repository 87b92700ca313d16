"""The cycle collector at start-up: off until the first frame when the TUI is started from the
command line (`cli.main`), then on, with what start-up made frozen and its garbage freed."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui.ui import collector
from acp_tui.ui.widgets import markdown_view
from acp_tui.ui.widgets.markdown_view import MarkdownView
from tests.support.pilot import demo_app, demo_workspace, wait_started, wait_until


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


async def test_no_full_collection_while_an_answer_is_still_appearing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flood is shown for long after its turn ended (the agent wrote it all at once): a full
    collection then, with the answer in memory, stalled the text for ~0.2 s. It waits until
    no view has taken text in for `QUIET` seconds."""
    monkeypatch.setattr(collector, "IDLE_BEFORE_FULL_COLLECTION", 0.0)
    monkeypatch.setattr(collector, "FULL_COLLECTION_EVERY", 0.0)
    full: list[object] = []
    app = demo_app(demo_workspace(tmp_path / "workspace"), tmp_path / "state")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        monkeypatch.setattr(collector.gc, "collect", lambda *args: full.append(args) or 0)
        # As a view does when it takes text in:
        monkeypatch.setattr(MarkdownView, "last_text", time.monotonic())
        app._collector._collect_when_idle()
        assert full == []
        monkeypatch.setattr(MarkdownView, "last_text", time.monotonic() - markdown_view.QUIET)
        app._collector._collect_when_idle()
        assert len(full) == 1
