"""A flood of Markdown (a fast agent, a replay): the view shows its end at once, estimates the
blocks that scroll past unseen, and ends up exactly as if it had rendered every block."""

from __future__ import annotations

import asyncio
from itertools import pairwise

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.pilot import Pilot

from acp_tui.demo.texts import MARKDOWN_SHOWCASE
from acp_tui.demo.turn import pieces
from acp_tui.ui.render import markdown
from acp_tui.ui.render.markdown import SourceBlock, split_blocks
from acp_tui.ui.render.markdown_cuts import block_cuts
from acp_tui.ui.widgets import markdown_view
from acp_tui.ui.widgets.markdown_view import MarkdownView

FLOOD = (MARKDOWN_SHOWCASE + "\n\n") * 12


@pytest.fixture(autouse=True)
def floods_taken_in_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame takes a flood in at once, whatever the machine's load (or a key an earlier test
    pressed): the blocks above the last screenful are estimated, left to catch up, as these
    tests need."""
    monkeypatch.setattr(markdown_view, "PARSE_TIME", 60.0)
    monkeypatch.setattr(markdown_view, "TYPING_PARSE_TIME", 60.0)


class Flooded(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield MarkdownView(id="flooded")
            yield MarkdownView(FLOOD, id="reference")  # rendered whole at its first layout

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).anchor()


def lines(view: MarkdownView) -> list[str]:
    return [view.render_line(y).text.rstrip() for y in range(view.virtual_size.height)]


async def wait_for(condition: object, timeout: float = 10) -> None:
    async def poll() -> None:
        while not condition():  # type: ignore[operator]
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


async def caught_up(pilot: Pilot[None], *views: MarkdownView) -> None:
    """Until every view is settled (the reference is taken in as a stream too, more than
    `WHOLE_TEXT`: it catches up as well), and laid out again."""
    await wait_for(lambda: all(view.settled for view in views))
    await pilot.pause()


async def catch_up_now(
    pilot: Pilot[None], monkeypatch: pytest.MonkeyPatch, *views: MarkdownView
) -> None:
    """The catch-up a test held back (`QUIET` patched to never) goes on at once for `views`,
    until each is settled: every view is woken, as none may be left to hand it the turn."""
    monkeypatch.setattr(markdown_view, "QUIET", 0.0)
    for view in views:
        view.flush()
    await caught_up(pilot, *views)


async def flood(pilot: Pilot[None], chunks: list[str]) -> tuple[MarkdownView, MarkdownView]:
    """Append `chunks` to the flooded view at once; (it, the reference) once all is shown, with
    estimates left (blocks that scrolled past unseen)."""
    app = pilot.app
    flooded = app.query_one("#flooded", MarkdownView)
    reference = app.query_one("#reference", MarkdownView)
    await pilot.pause()
    for chunk in chunks:
        flooded.append(chunk)
    await wait_for(lambda: flooded.shown)
    assert not flooded.settled
    return flooded, reference


async def test_a_flood_ends_exactly_as_if_every_block_had_been_rendered() -> None:
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        flooded, reference = await flood(pilot, pieces(FLOOD, 3))
        await caught_up(pilot, flooded, reference)
        assert flooded.source == FLOOD
        assert flooded.virtual_size.height == reference.virtual_size.height
        assert lines(flooded) == lines(reference)


async def test_a_flood_is_parsed_only_where_it_is_rendered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The text far above the screen is cut into pieces without being parsed: while the flood
    is taken in, most of it is not parsed; each piece is, once it is rendered."""
    parsed: list[str] = []

    def counted(source: str) -> list[SourceBlock]:
        parsed.append(source)
        return split_blocks(source)

    monkeypatch.setattr(markdown, "split_blocks", counted)
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        parsed.clear()  # the reference's
        flooded, reference = await flood(pilot, [FLOOD])
        assert sum(map(len, parsed)) < len(FLOOD) / 4
        await caught_up(pilot, flooded, reference)
        assert lines(flooded) == lines(reference)


async def test_text_with_no_cut_is_not_looked_at_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A flood that is one long block (an agent's huge line) has nowhere to cut: the skim
    looks at each part of it once, not again every frame while the frames parse it."""
    looked: list[int] = []

    def counted(source: str, start: int = 0, step: int = 1) -> list[int]:
        if source.startswith("word "):  # not the reference view's
            looked.append(len(source))
        return block_cuts(source, start, step)

    monkeypatch.setattr(markdown_view, "PARSE_TIME", 0.002)  # frames enough to take it in
    monkeypatch.setattr(markdown_view, "block_cuts", counted)
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        flooded = app.query_one("#flooded", MarkdownView)
        await pilot.pause()
        flooded.append("word " * 20_000)
        await wait_for(lambda: flooded.shown, timeout=60)
        assert flooded.source == "word " * 20_000
        assert len(looked) == 1


async def test_a_long_view_at_a_new_width_renders_only_what_shows_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A width change (a resize, a scrollbar that comes and goes) measures a long view again
    from its last piece for `FOLD_TIME` only (here none): the others are estimated, rendered
    when shown or caught up on (a flood's layout that narrowed and widened its views rendered
    every block twice, seconds without a frame), and it ends as a view rendered whole."""
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        flooded, reference = await flood(pilot, [FLOOD])
        await caught_up(pilot, flooded, reference)
        width = flooded._width
        monkeypatch.setattr(markdown_view, "FOLD_TIME", 0.0)
        await pilot.resize_terminal(80, 30)
        await wait_for(lambda: flooded._width not in (width, -1))
        assert len(flooded._estimated) > len(flooded._pieces) / 2
        monkeypatch.setattr(markdown_view, "FOLD_TIME", 0.010)
        await caught_up(pilot, flooded, reference)
        assert lines(flooded) == lines(reference)


async def test_an_estimated_block_is_rendered_when_it_comes_into_view() -> None:
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        flooded, reference = await flood(pilot, [FLOOD])
        shown = [flooded.render_line(y).text.rstrip() for y in range(20)]
        assert shown == lines(reference)[:20]


async def test_blocks_no_one_sees_wait_for_a_pause_in_the_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While any view still takes text in, the frames go to what is seen: the estimated blocks
    are rendered only once no view has had text for `QUIET` (here: said to be never, then
    long ago)."""
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        monkeypatch.setattr(MarkdownView, "last_text", float("inf"))  # text never stops
        monkeypatch.setattr(markdown_view, "QUIET", 0.0)
        flooded = app.query_one("#flooded", MarkdownView)
        await pilot.pause()
        flooded.append(FLOOD)
        await wait_for(lambda: flooded.shown)
        MarkdownView.last_text = float("inf")  # the append said now
        for _ in range(50):  # frames enough to render them all, were they not waiting
            flooded.flush()
        assert not flooded.settled
        MarkdownView.last_text = 0.0  # a pause
        flooded.flush()
        await wait_for(lambda: flooded.settled)


class TwoFlooded(App[None]):
    # The scrollbar is there from the start: one appearing with the first flood would narrow
    # the views, and a view laid out at a new width measures its blocks again (the estimates
    # this test counts on change under it, a frame or two after the flood was shown).
    CSS = "VerticalScroll { overflow-y: scroll; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield MarkdownView(id="first")
            yield MarkdownView(id="second")
            yield MarkdownView(id="hidden")

    def on_mount(self) -> None:
        self.query_one("#hidden").display = False


async def test_a_view_hidden_before_it_caught_up_does_not_hold_up_the_others() -> None:
    """A view whose turn it is to catch up, hidden and no longer measured (as after a theme
    change), gives the turn up; views removed leave the queue; a hidden view's text does not
    put off the others' catch-up."""
    app = TwoFlooded()
    async with app.run_test(size=(100, 30)) as pilot:
        first, second = (
            app.query_one("#first", MarkdownView),
            app.query_one("#second", MarkdownView),
        )
        await pilot.pause()
        for view in (first, second):
            view.append(FLOOD)
            await wait_for(lambda view=view: view.shown and not view.settled)
        assert MarkdownView.behind[-2:] == [first, second]
        second.display = False
        second.invalidate()  # not laid out again while hidden
        quiet_since = MarkdownView.last_text
        app.query_one("#hidden", MarkdownView).append("text no one sees")
        assert MarkdownView.last_text == quiet_since
        await wait_for(lambda: first.settled)
    assert first not in MarkdownView.behind and second not in MarkdownView.behind


def placed_in_turn(view: MarkdownView) -> bool:
    """Each piece starts where its height says the one before it ends (a blank line apart)."""
    return all(
        after.top == before.top + before.height + (1 if after.height else 0)
        for before, after in pairwise(view._pieces)
    )


async def test_the_catch_up_places_its_blocks_once_it_is_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The catch-up renders a frame's worth of estimated blocks at a time and places them all
    when it is done: heights placed every frame moved the view under the screen, which was
    drawn and written again whole though nothing on it changed."""
    monkeypatch.setattr(markdown_view, "FOLD_TIME", 0.001)  # frames enough to count
    monkeypatch.setattr(markdown_view, "QUIET", 10**9)  # no catch-up before it is watched
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        flooded, reference = await flood(pilot, [FLOOD])
        heights: list[int] = []
        layouts: list[bool] = []
        catch_up, changed = flooded._catch_up, flooded._changed

        def watched_catch_up(deadline: float) -> None:
            heights.append(flooded._frozen_height)
            catch_up(deadline)

        def watched_changed(*, layout: bool = False, region: Region | None = None) -> None:
            layouts.append(layout)
            changed(layout=layout, region=region)

        monkeypatch.setattr(flooded, "_catch_up", watched_catch_up)
        monkeypatch.setattr(flooded, "_changed", watched_changed)
        await catch_up_now(pilot, monkeypatch, flooded, reference)
        assert len(heights) > 2 and len(set(heights)) == 1
        assert layouts == [True]
        assert placed_in_turn(flooded)
        assert lines(flooded) == lines(reference)


async def test_a_block_the_catch_up_rendered_is_placed_when_it_comes_into_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Shown before the catch-up is done, a block it rendered is placed at once, with every
    other block it rendered; until then each block keeps the place its estimate gave it."""
    monkeypatch.setattr(markdown_view, "QUIET", 10**9)  # no catch-up but the test's
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        flooded, reference = await flood(pilot, [FLOOD])
        estimated = len(flooded._estimated)
        for _ in range(3):
            flooded._measure(flooded._estimated.pop())
        piece = flooded._pieces[min(flooded._measured)]
        assert piece.estimated and placed_in_turn(flooded)
        flooded.render_line(piece.top)
        assert not flooded._measured and not piece.estimated
        assert len(flooded._estimated) == estimated - 3
        assert placed_in_turn(flooded)
        await catch_up_now(pilot, monkeypatch, flooded, reference)
        assert lines(flooded) == lines(reference)


async def test_the_last_estimated_block_shown_places_what_the_catch_up_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The catch-up measured every block but the first (it works from the end) when the user
    scrolls to that one: its turn will not come again, so its blocks are placed then, and the
    view is settled only with every height exact."""
    monkeypatch.setattr(markdown_view, "QUIET", 10**9)
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        flooded, reference = await flood(pilot, [FLOOD])
        first = flooded._estimated[0]
        while len(flooded._estimated) > 1:
            flooded._measure(flooded._estimated.pop())
        flooded.render_line(flooded._pieces[first].top)
        assert not flooded._measured and placed_in_turn(flooded)
        await catch_up_now(pilot, monkeypatch, flooded, reference)
        assert lines(flooded) == lines(reference)


async def test_a_block_placed_as_it_is_drawn_draws_what_is_at_its_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Drawing a measured block places every block the catch-up measured, which can move the
    block itself: the line drawn is what is at that line once they are placed."""
    monkeypatch.setattr(markdown_view, "QUIET", 10**9)
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        flooded, _ = await flood(pilot, [FLOOD])
        while flooded._estimated:
            flooded._measure(flooded._estimated.pop())
        gains = {i: h - flooded._pieces[i].height for i, h in flooded._measured.items()}

        def gained_above(index: int) -> int:
            return sum(gain for i, gain in gains.items() if i < index)

        # A block that the blocks above it, shrinking, move up past its own first line.
        index = max(flooded._measured, key=lambda i: -gained_above(i) - flooded._measured[i])
        assert -gained_above(index) >= flooded._measured[index]
        y = flooded._pieces[index].top
        assert flooded.render_line(y).text == flooded.render_line(y).text


async def test_the_lines_moved_count_the_gap_of_a_block_that_draws_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An HTML comment is estimated at a line and draws none, and the blank line before it
    goes too: the lines a reader's line moved by count both."""
    monkeypatch.setattr(markdown_view, "QUIET", 10**9)
    text = "".join(f"Paragraph {n} with some words.\n\n<!-- note {n} -->\n\n" for n in range(400))
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        flooded, _ = await flood(pilot, [text])
        exact = next(i for i, p in enumerate(flooded._pieces) if not p.estimated and p.height)
        line = flooded._pieces[exact].top  # the first block drawn: the user reads it
        flooded.take_moved(-1)
        while flooded._estimated:
            flooded._measure(flooded._estimated.pop())
        flooded._place_measured()
        assert flooded.take_moved(line) == flooded._pieces[exact].top - line != 0


async def test_a_line_inside_a_block_that_shrank_moves_with_the_blocks_above_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reader's line is in a block that shrinks when placed (an HTML block estimated
    longer than it draws): only the blocks above that block move it, not those after."""
    monkeypatch.setattr(markdown_view, "QUIET", 10**9)
    filler = "".join(f"Filler paragraph {n}.\n\n" for n in range(300))
    html = "<div>\n" + "".join(f"line {k}\n" for k in range(40)) + "</div>\n\n"
    text = filler + html + "<!-- a comment -->\n\n" + "".join(f"Short {n}.\n\n" for n in range(100))
    app = Flooded()
    async with app.run_test(size=(100, 30)) as pilot:
        flooded, _ = await flood(pilot, [text])
        estimated = list(flooded._estimated)
        while flooded._estimated:
            flooded._measure(flooded._estimated.pop())
        gains = {i: flooded._measured[i] - flooded._pieces[i].height for i in estimated}
        index = next(
            i for i in estimated if (flooded._pieces[i].markdown or "").startswith("<div>")
        )
        piece = flooded._pieces[index]
        assert gains[index] < 0
        line = piece.top + piece.height - 1  # its last line as laid out
        flooded.take_moved(-1)
        flooded._place_measured()
        assert flooded.take_moved(line) == sum(gains[i] for i in estimated if i < index)
