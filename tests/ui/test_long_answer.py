"""A long streamed answer stays one Markdown view however long it grows, and nothing of it is
lost: all its text is there in order, and scrolling, search and copy reach all of it."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget

from acp_tui.demo.texts import MARKDOWN_SHOWCASE
from acp_tui.demo.turn import pieces
from acp_tui.protocol.content import text_block
from acp_tui.session.state import Message
from acp_tui.ui.screens import SearchScreen
from acp_tui.ui.widgets import markdown_view
from acp_tui.ui.widgets.markdown_view import MarkdownView
from acp_tui.ui.widgets.message import AgentMessage
from acp_tui.ui.widgets.thought import Thought
from acp_tui.ui.widgets.transcript import Transcript
from tests.agents.flood_agent import SESSION
from tests.support.pilot import demo_app, send, wait_idle, wait_started, wait_until

AGENT = Path(__file__).resolve().parent.parent / "agents" / "flood_agent.py"
COPIES = 80
"""The showcase this many times over (about 2,700 chunks, 5,000 lines at 120 columns): more than
the first layout takes in at once, and hundreds of blocks, most of them scrolling past unseen."""


def flood(path: Path, chunks: list[str]) -> Path:
    with path.open("w") as file:
        for chunk in chunks:
            update = {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "msg_long",
                "content": {"type": "text", "text": chunk},
            }
            params = {"sessionId": SESSION, "update": update}
            file.write(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}))
            file.write("\n")
    return path


def counted(function: Callable[..., Any], calls: list[Widget]) -> Callable[..., Any]:
    """`function` of a widget, with each widget it is called for added to `calls`."""

    def counted_call(widget: Widget, *args: Any, **kwargs: Any) -> Any:
        calls.append(widget)
        return function(widget, *args, **kwargs)

    return counted_call


def lines_of(view: MarkdownView) -> list[str]:
    return [view.render_line(y).text.rstrip() for y in range(view.size.height)]


async def test_a_long_answer_stays_one_view_and_keeps_all_its_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    numbered = [f"{MARKDOWN_SHOWCASE}\n\nCopy number {n:02} ends here.\n\n" for n in range(COPIES)]
    chunks = [chunk for copy in numbered for chunk in pieces(copy, 6)]
    answer = "".join(chunks)
    argv = [sys.executable, str(AGENT), str(flood(tmp_path / "flood.jsonl", chunks))]
    app = demo_app(tmp_path, tmp_path / "state", argv=argv)
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    # The answer's container draws nothing itself: Textual's default renders a widget's whole
    # height (thousands of blank lines) each time it changes, each frame of a flood.
    drawn: list[Widget] = []
    monkeypatch.setattr(Widget, "_render_content", counted(Widget._render_content, drawn))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        await send(app, pilot, "go")
        await wait_idle(app, pilot, timeout=60)
        message = app.chat.query_one(AgentMessage)
        assert message.item.text == answer
        last = f"Copy number {COPIES - 1:02} ends here."
        view = message.query_one(MarkdownView)
        await wait_until(pilot, lambda: any(last in line for line in lines_of(view)))
        # One widget for all of it: Textual places every widget of the screen each frame, so
        # a view more for each part of a long answer was a frame's cost growing with it.
        assert list(message.children) == [view]
        assert view.size.height > 4000  # taller than the parts a long answer was once cut into
        assert not [widget for widget in drawn if isinstance(widget, AgentMessage)]
        # All the text, in order: each copy's last line once, in turn.
        ends = [line.strip() for line in lines_of(view) if "ends here" in line]
        assert ends == [f"Copy number {n:02} ends here." for n in range(COPIES)]
        assert view.source == answer
        # Scrolling to the top shows the answer's beginning.
        transcript = app.chat.query_one(Transcript)
        transcript.scroll_home(animate=False, immediate=True)
        await wait_until(pilot, lambda: view.region.y < transcript.region.bottom)
        # Search finds the first copy's end, and copy takes the whole answer.
        await pilot.press("ctrl+f")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"number 00", "enter")
        await wait_until(pilot, lambda: app.focused is message)
        await pilot.press("c")
        assert copied[-1] == answer
        # The blocks that scrolled past unseen are rendered in the end.
        await wait_until(pilot, lambda: message.settled, timeout=60)


class _RestApp(App[None]):
    def __init__(self, rest: str) -> None:
        super().__init__()
        self.rest = rest

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield MarkdownView(self.rest)


async def test_a_view_takes_in_text_given_at_once_a_frame_at_a_time_without_copying_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A view given much text at once (megabytes: a flood read before its first layout) takes
    part of it in each frame. The text stays the one string it was given, read from an
    offset, not cut into a new copy of what is left every frame, and all of it is taken in."""
    # A frame takes in ~20 KB of the 430 KB: frames enough that the first one is seen.
    monkeypatch.setattr(markdown_view, "SKIM_TEXT", 16 * 1024)
    rest = "".join(f"Paragraph {n}: {MARKDOWN_SHOWCASE[:200]}\n\n" for n in range(2000))
    app = _RestApp(rest)
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(MarkdownView)
        await wait_until(pilot, lambda: len(view._pending) < len(rest))
        assert view._pending.taken > 0
        assert view._pending.chunks[0] is rest
        await wait_until(pilot, lambda: view.shown, timeout=60)
        assert not view._pending
        assert view.source == rest


async def test_frames_take_in_less_while_the_user_types(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A flood's frame parses for `PARSE_TIME`, a share of the frame large enough for the
    display to keep up with the agent; while the user types, frames parse for
    `TYPING_PARSE_TIME` only, so that a key waits less for the frame under way."""
    monkeypatch.setattr(markdown_view, "TYPING_PARSE_TIME", 0.0)  # none: what typing changes
    monkeypatch.setattr(markdown_view, "SKIM_PIECE", 10**9)  # all of the text is parsed
    # Frames enough (~10 KB each of 430 KB) that some text is left once the first is seen.
    rest = "".join(f"Paragraph {n}: {MARKDOWN_SHOWCASE[:200]}\n\n" for n in range(2000))
    app = _RestApp(rest)
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(MarkdownView)
        await wait_until(pilot, lambda: len(view._pending) < len(rest))
        monkeypatch.setattr(MarkdownView, "last_key", time.monotonic())
        left = len(view._pending)
        view.flush()
        assert len(view._pending) == left
        monkeypatch.setattr(MarkdownView, "last_key", time.monotonic() - markdown_view.TYPING)
        view.flush()
        assert len(view._pending) < left


async def test_a_key_press_counts_as_typing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(MarkdownView, "last_key", 0.0)
    app = demo_app(tmp_path, tmp_path / "state")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        await pilot.press("a")
        assert time.monotonic() - MarkdownView.last_key < markdown_view.TYPING


class _AnswerApp(App[None]):
    """One block of the agent's (its answer, or a thought) holding `text`."""

    def __init__(self, text: str, block: type[AgentMessage | Thought] = AgentMessage) -> None:
        super().__init__()
        self.item = Message(id="m", role="assistant", turn=1, content=[text_block(text)])
        self.block = block

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self.block(self.item)


async def test_an_answer_given_whole_is_taken_in_as_a_stream() -> None:
    """A message shown with more text than a frame takes (a flood read before the message's
    first layout, a long answer shown again) does not take it all in at its first layout,
    which held a flood's first frame for most of a second: it is taken in a frame's worth at
    a time, as a streamed answer is."""
    text = "".join(f"{MARKDOWN_SHOWCASE}\n\nCopy number {n:02} ends here.\n\n" for n in range(8))
    assert len(text) > markdown_view.WHOLE_TEXT
    app = _AnswerApp(text)
    async with app.run_test(size=(100, 40)) as pilot:
        message = app.query_one(AgentMessage)
        view = app.query_one(MarkdownView)
        await wait_until(pilot, lambda: view.size.width > 0)
        assert len(view._pending) > 0  # the first layout took in a frame's worth at most
        await wait_until(pilot, lambda: message.settled, timeout=60)
        assert view.source == text


async def test_a_short_answer_given_whole_is_taken_in_at_its_first_layout() -> None:
    """Up to `WHOLE_TEXT`, a message shown again has its exact height at its first layout."""
    text = MARKDOWN_SHOWCASE[: markdown_view.WHOLE_TEXT]
    app = _AnswerApp(text)
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(MarkdownView)
        await wait_until(pilot, lambda: view.size.width > 0)
        assert len(view._pending) == 0 and view.settled
        assert view.source == text


async def test_the_text_read_stays_in_place_while_blocks_above_it_are_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scrolled up into a flood's answer, the user reads blocks whose neighbours above were
    estimated; once those are measured (the catch-up, or scrolling on), the text on screen
    does not move: the transcript scrolls by the lines they gained."""
    monkeypatch.setattr(markdown_view, "QUIET", 10**9)  # the catch-up waits for the test
    numbered = [f"{MARKDOWN_SHOWCASE}\n\nCopy number {n:02} ends here.\n\n" for n in range(COPIES)]
    chunks = [chunk for copy in numbered for chunk in pieces(copy, 6)]
    argv = [sys.executable, str(AGENT), str(flood(tmp_path / "flood.jsonl", chunks))]
    app = demo_app(tmp_path, tmp_path / "state", argv=argv)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        await send(app, pilot, "go")
        session = app.session
        assert session is not None
        await wait_until(pilot, lambda: not session.busy, timeout=60)
        message = app.chat.query_one(AgentMessage)
        view = message.query_one(MarkdownView)
        await wait_until(pilot, lambda: view.shown and view.source == "".join(chunks), timeout=60)
        transcript = app.chat.query_one(Transcript)

        def read() -> list[str]:
            top = int(transcript.scroll_y) - transcript._placed[message]
            return [view.render_line(top + y).text.rstrip() for y in range(20)]

        transcript.scroll_to(y=transcript.scroll_y // 2, animate=False, immediate=True)
        await pilot.pause()
        await pilot.pause()
        shown = read()
        assert view._estimated and any(line.strip() for line in shown)
        monkeypatch.setattr(markdown_view, "QUIET", 0.0)
        view.flush()
        await wait_until(pilot, lambda: view.settled, timeout=60)
        await pilot.pause()
        assert read() == shown


async def test_a_thought_says_the_lines_gained_above_a_line_of_it() -> None:
    """What `Transcript._keep_place` asks a block: a thought's view starts below its title."""
    app = _AnswerApp(MARKDOWN_SHOWCASE, Thought)
    async with app.run_test(size=(100, 40)) as pilot:
        thought = app.query_one(Thought)
        view = thought.query_one(MarkdownView)
        await wait_until(pilot, lambda: view.size.height > 0)
        view._moves.append((5, 3))  # a block that ended at the view's line 5 gained 3 lines
        assert thought.take_moved(5) == 0  # the title's line first: the view's line 4
        view._moves.append((5, 3))
        assert thought.take_moved(6) == 3
        assert thought.take_moved(6) == 0  # taken
