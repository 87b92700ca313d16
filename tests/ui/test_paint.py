"""Typed text reaches the screen at once, not at the screen's next frame (`paint_now`)."""

from __future__ import annotations

import sys
from typing import Any

from textual._compositor import ChopsUpdate
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from acp_tui.ui.paint import paint_now
from acp_tui.ui.widgets.prompt_input import PromptInput


class PromptApp(App[None]):
    def compose(self) -> ComposeResult:
        yield PromptInput(id="prompt")


def capture_displays(app: App[Any]) -> list[tuple[str, str]]:
    """What each screen update would write to the terminal from now on, and the function that
    asked for it (`paint_now`, or Textual's own frame)."""
    written: list[tuple[str, str]] = []
    display = app._display

    def record(screen: Any, renderable: Any) -> None:
        display(screen, renderable)
        if renderable is not None:
            assert isinstance(renderable, ChopsUpdate)
            caller = sys._getframe(1).f_code.co_name
            written.append((caller, renderable.render_segments(app.console)))

    app._display = record  # type: ignore[method-assign]
    return written


async def focused_prompt(pilot: Pilot[None]) -> PromptInput:
    prompt = pilot.app.query_one(PromptInput)
    prompt.focus()
    await pilot.pause()
    return prompt


async def test_paint_now_puts_the_change_on_screen_before_returning() -> None:
    app = PromptApp()
    async with app.run_test(size=(60, 10)) as pilot:
        prompt = await focused_prompt(pilot)
        written = capture_displays(app)
        prompt.insert("zq7")
        paint_now(prompt)
        assert len(written) == 1
        assert "zq7" in written[0][1]


async def test_a_typed_key_is_painted_by_the_prompt_not_the_next_frame() -> None:
    app = PromptApp()
    async with app.run_test(size=(60, 10)) as pilot:
        prompt = await focused_prompt(pilot)
        written = capture_displays(app)
        await pilot.press("q")
        assert prompt.text == "q"
        first = next(caller for caller, text in written if "q" in text)
        assert first == "paint_now"


async def test_nothing_is_painted_when_the_widget_needs_a_layout() -> None:
    app = PromptApp()
    async with app.run_test(size=(60, 10)) as pilot:
        prompt = await focused_prompt(pilot)
        written = capture_displays(app)
        prompt.insert("one\ntwo\nthree\nfour")  # taller: the next frame lays it out
        prompt.refresh(layout=True)
        paint_now(prompt)
        assert written == []
        await pilot.pause()
        assert any("four" in text for _, text in written)


async def test_an_editing_key_is_painted_by_the_prompt_too() -> None:
    app = PromptApp()
    async with app.run_test(size=(60, 10)) as pilot:
        prompt = await focused_prompt(pilot)
        await pilot.press("x", "y")
        assert prompt.text == "xy"
        written = capture_displays(app)
        await pilot.press("backspace")
        assert prompt.text == "x"
        assert written[0][0] == "paint_now"
