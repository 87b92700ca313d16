"""How the main states look, against the real demo agent (SVGs in `__snapshots__/`).

Update with `pytest tests/ui/test_snapshots.py --snapshot-update`, then look at the report.
The workspace path is fixed (the header shows it), the spinner is still, and the inspector's
random ids are masked, so the pictures only change when the look does.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from acp_tui.session.change import Change
from acp_tui.ui.app import AcpApp
from acp_tui.ui.widgets.inspector import Inspector
from acp_tui.ui.widgets.markdown_view import MarkdownView
from acp_tui.ui.widgets.prompt_input import PromptInput
from acp_tui.ui.widgets.transcript import Transcript
from tests.support.pilot import (
    core,
    demo_app,
    demo_workspace,
    send,
    wait_idle,
    wait_permission,
    wait_started,
    wait_until,
)

# One worker for them all: they share a fixed workspace path (the header shows it); the
# floods' worker, so that no flood starves the clock a snapshot is caught by.
pytestmark = pytest.mark.xdist_group("floods")

SIZE = (110, 34)
SCRATCH = Path(tempfile.gettempdir()) / "acp-tui-snapshots"
Scene = Callable[[AcpApp, Pilot[Any]], Awaitable[None]]


@pytest.fixture
def shoot(snap_compare: Any) -> Callable[[Scene], bool]:
    def compare(scene: Scene) -> bool:
        shutil.rmtree(SCRATCH, ignore_errors=True)
        app = demo_app(demo_workspace(SCRATCH / "workspace"), SCRATCH / "state")
        app.animation_level = "none"

        async def run_before(pilot: Pilot[Any]) -> None:
            await wait_started(app, pilot)
            app.chat.query_one(PromptInput).cursor_blink = False  # a blink is not a change
            await scene(app, pilot)
            await wait_until(pilot, lambda: _settled(app))
            await pilot.pause(0.2)  # what the scene set off is drawn (a dialog mounts late)

        return bool(snap_compare(app, terminal_size=SIZE, run_before=run_before))

    return compare


async def _top(app: AcpApp, pilot: Pilot[Any]) -> None:
    app.chat.query_one(Transcript).scroll_home(animate=False, immediate=True)
    await pilot.pause()


def test_streaming_answer(shoot: Callable[[Scene], bool]) -> None:
    async def scene(app: AcpApp, pilot: Pilot[Any]) -> None:
        # The slow scenario ticks once a second: caught mid-turn at its first tick, the agent
        # is stopped (SIGSTOP) so that no second tick comes before the screen is taken,
        # however loaded the machine (it is killed as the app quits). It is stopped by a
        # listener of the session, as the tick is read: a test polling for it had let a second
        # of a loaded machine pass, and the second tick in.
        process = core(app).client.process  # type: ignore[union-attr]
        stopped: list[bool] = []

        def stop_at_the_first_tick(_session: object, change: Change) -> None:
            if not stopped and "1/30" in getattr(change.item, "text", ""):
                os.killpg(process.process.pid, signal.SIGSTOP)
                stopped.append(True)

        assert app.session is not None
        app.session.listeners.append(stop_at_the_first_tick)
        await send(app, pilot, "slow 30")
        await wait_until(pilot, lambda: bool(stopped))
        await wait_until(pilot, lambda: _showing(app, "1/30"))

    assert shoot(scene)


def test_markdown_answer(shoot: Callable[[Scene], bool]) -> None:
    async def scene(app: AcpApp, pilot: Pilot[Any]) -> None:
        await send(app, pilot, "markdown")
        await wait_idle(app, pilot)
        await _top(app, pilot)

    assert shoot(scene)


def test_tool_call_with_diff(shoot: Callable[[Scene], bool]) -> None:
    async def scene(app: AcpApp, pilot: Pilot[Any]) -> None:
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        await pilot.press("a")
        await wait_idle(app, pilot)

    assert shoot(scene)


def test_terminal_output(shoot: Callable[[Scene], bool]) -> None:
    async def scene(app: AcpApp, pilot: Pilot[Any]) -> None:
        await send(app, pilot, "/run printf 'line %s\\n' 1 2 3")
        await wait_permission(app, pilot)
        await pilot.press("a")
        await wait_idle(app, pilot)

    assert shoot(scene)


def test_plan(shoot: Callable[[Scene], bool]) -> None:
    async def scene(app: AcpApp, pilot: Pilot[Any]) -> None:
        await send(app, pilot, "plan")
        await wait_idle(app, pilot)
        await _top(app, pilot)

    assert shoot(scene)


def test_permission_dialog(shoot: Callable[[Scene], bool]) -> None:
    async def scene(app: AcpApp, pilot: Pilot[Any]) -> None:
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)

    assert shoot(scene)


def test_cancelled_turn(shoot: Callable[[Scene], bool]) -> None:
    async def scene(app: AcpApp, pilot: Pilot[Any]) -> None:
        await send(app, pilot, "slow 30")
        await wait_until(pilot, lambda: "1/30" in _last_text(app))
        app.chat.query_one(PromptInput).insert("a draft that survives")
        await pilot.press("ctrl+c")
        await wait_idle(app, pilot)

    assert shoot(scene)


def test_mode_selector(shoot: Callable[[Scene], bool]) -> None:
    async def scene(app: AcpApp, pilot: Pilot[Any]) -> None:
        await pilot.press("f2")
        await pilot.pause()
        await pilot.press("enter")  # the Mode setting's choices (first, in the demo's order)
        await pilot.pause()

    assert shoot(scene)


def test_inspector(shoot: Callable[[Scene], bool]) -> None:
    async def scene(app: AcpApp, pilot: Pilot[Any]) -> None:
        await send(app, pilot, "plan")
        await wait_idle(app, pilot)
        inspector = app.chat.query_one(Inspector)
        ids = re.compile(r"(sess|msg|call|plan)_[0-9a-f]{6,}")
        lines = [(kind, ids.sub(r"\1_…", text)) for kind, text in inspector._lines]
        inspector._lines.clear()
        inspector._lines.extend(lines)
        await pilot.press("f12")
        await pilot.pause()

    assert shoot(scene)


def _settled(app: AcpApp) -> bool:
    """Every streamed text is drawn as it stands."""
    return all(view.settled for view in app.chat.query(MarkdownView))


def _showing(app: AcpApp, text: str) -> bool:
    """`text` is in a message on screen, drawn."""
    views = list(app.chat.query(MarkdownView))
    return any(text in view.source for view in views) and _settled(app)


def _last_text(app: AcpApp) -> str:
    session = app.session
    if session is None or not session.state.timeline:
        return ""
    return getattr(session.state.timeline[-1], "text", "")
