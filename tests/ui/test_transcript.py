"""The virtual transcript on long histories the real demo agent replays (`session/load`): only
the blocks near the view are mounted, and scrolling, search, folds, copy and the block keys
reach the others."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot

from acp_tui.config import DEMO_COMMAND as DEMO_AGENT
from acp_tui.demo.long_session import write_long_session
from acp_tui.session.state import Message, TimelineItem
from acp_tui.ui.app import AcpApp
from acp_tui.ui.screens import SearchScreen
from acp_tui.ui.widgets.block import Block
from acp_tui.ui.widgets.terminal_view import TerminalView
from acp_tui.ui.widgets.thought import Thought
from acp_tui.ui.widgets.tool_call import ToolCallCard
from acp_tui.ui.widgets.transcript import Transcript
from tests.support.pilot import demo_app, demo_workspace, wait_started, wait_until

WINDOW = 60
"""More blocks than a 40-line screen and the screens around it ever need."""


@asynccontextmanager
async def long_history(tmp_path: Path, updates: int) -> AsyncIterator[tuple[AcpApp, Pilot[int]]]:
    """The app resuming a session whose replay is `updates` updates (no local record)."""
    workspace = demo_workspace(tmp_path / "workspace")
    data = tmp_path / "demo-sessions"
    session_id = write_long_session(data, updates, workspace)
    argv = [*DEMO_AGENT, "--speed", "0", "--data-dir", str(data)]
    app = demo_app(workspace, tmp_path / "state", argv=argv, resume=session_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot, timeout=30)
        yield app, pilot


def timeline(app: AcpApp) -> list[TimelineItem]:
    assert app.session is not None
    return app.session.state.timeline


def on_screen(app: AcpApp, item: TimelineItem) -> bool:
    block = app.chat.query_one(Transcript).block_for(item)
    return block is not None and block in app.chat._compositor.visible_widgets


def user_message(app: AcpApp, text: str) -> Message:
    return next(i for i in timeline(app) if isinstance(i, Message) and i.text == text)


async def test_a_20000_update_history_opens_at_its_end(tmp_path: Path) -> None:
    async with long_history(tmp_path, 20_000) as (app, pilot):
        items = timeline(app)
        await wait_until(pilot, lambda: on_screen(app, items[-1]), timeout=10)
        transcript = app.chat.query_one(Transcript)
        assert len(items) == 19_047  # nothing dropped (v1 plans replace each other)
        assert len(transcript.blocks) < WINDOW
        assert transcript.following
        # The scrollbar spans the whole history, not the mounted blocks.
        assert transcript.virtual_size.height > 100 * len(transcript.blocks) * 10


async def test_scrolling_mounts_what_comes_into_view_and_keeps_the_place(
    tmp_path: Path,
) -> None:
    async with long_history(tmp_path, 2_000) as (app, pilot):
        items = timeline(app)
        transcript = app.chat.query_one(Transcript)
        assert not on_screen(app, items[0])
        transcript.scroll_home(animate=False, immediate=True)
        await wait_until(pilot, lambda: on_screen(app, items[0]))
        assert len(transcript.blocks) < WINDOW and not transcript.following
        # Page down through a stretch of history: every page shows blocks, the window moves.
        for _ in range(30):
            transcript.scroll_page_down(animate=False)
            await pilot.pause()
            assert any(b in app.chat._compositor.visible_widgets for b in transcript.blocks)

        def shown() -> list[Block]:
            return [b for b in transcript.blocks if b in app.chat._compositor.visible_widgets]

        await wait_until(pilot, lambda: shown() and items.index(shown()[0].item) > 20)
        assert len(transcript.blocks) < WINDOW
        # Paging back up mounts the blocks above without moving what is read: a page up moves
        # the top block down by exactly a page.
        top = shown()[0]
        before = top.region.y
        await pilot.press("pageup")
        page = transcript.scrollable_content_region.height
        await wait_until(pilot, lambda: top.is_attached and top.region.y == before + page)
        # Further up, blocks released below are shown again above (another item each): the
        # place is kept all the same.
        for _ in range(3):
            first = transcript.blocks[0]
            item, before = first.item, first.region.y
            transcript.scroll_page_up(animate=False)
            await pilot.pause()
            assert transcript.block_for(item) is first and first.region.y == before + page
        # The scrollbar dragged to the middle: the middle of the history is what shows.
        transcript.scroll_to(y=transcript.max_scroll_y / 2, animate=False, immediate=True)
        await wait_until(
            pilot, lambda: shown() and 0.3 < items.index(shown()[0].item) / len(items) < 0.7
        )
        await pilot.press("ctrl+end")
        await wait_until(pilot, lambda: on_screen(app, items[-1]))
        assert transcript.following


async def test_search_fold_and_copy_reach_released_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with long_history(tmp_path, 2_000) as (app, pilot):
        copied: list[str] = []
        monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
        transcript = app.chat.query_one(Transcript)
        target = user_message(app, "turn 00003")
        assert transcript.block_for(target) is None
        await pilot.press("ctrl+f")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"turn 00003", "enter")
        await wait_until(pilot, lambda: on_screen(app, target))
        assert isinstance(app.focused, Block) and app.focused.item is target
        # The thought after it, folded (its turn is over); the user opens it.
        await pilot.press("j")
        thought = app.focused
        assert isinstance(thought, Thought) and not thought.expanded
        item = thought.item
        await pilot.press("enter")
        assert thought.expanded
        await pilot.press("c")
        assert copied[-1] == item.text
        # Released far away (its widget may show another thought by then), then mounted
        # again: still open.
        await pilot.press("escape", "ctrl+end")
        await wait_until(pilot, lambda: transcript.block_for(item) is None)
        transcript.reveal(item)
        await wait_until(pilot, lambda: on_screen(app, item))
        again = transcript.block_for(item)
        assert isinstance(again, Thought) and again.item is item and again.expanded
        # Other thoughts shown meanwhile (reusing released blocks) stay folded.
        others = [b for b in transcript.blocks if isinstance(b, Thought) and b is not again]
        assert others and not any(other.expanded for other in others)


async def test_block_keys_cross_the_window(tmp_path: Path) -> None:
    async with long_history(tmp_path, 2_000) as (app, pilot):
        items = timeline(app)

        def focused(item: object) -> bool:
            return isinstance(app.focused, Block) and app.focused.item is item

        await pilot.press("alt+up")
        await wait_until(pilot, lambda: focused(items[-1]))
        await pilot.press("home")
        await wait_until(pilot, lambda: on_screen(app, items[0]))
        assert isinstance(app.focused, Block) and app.focused.item is items[0]
        for index in range(1, 4):
            await pilot.press("j")
            await wait_until(pilot, functools.partial(focused, items[index]))
        await pilot.press("k")
        await wait_until(pilot, lambda: focused(items[2]))
        # Scrolled far from the focused block, it is released: the prompt takes the keys.
        await pilot.press("ctrl+end")
        await wait_until(pilot, lambda: on_screen(app, items[-1]))
        assert app.chat.query_one(Transcript).block_for(items[2]) is None
        assert not isinstance(app.focused, Block)


async def test_a_page_never_starts_behind_the_view(tmp_path: Path) -> None:
    """A place kept while a page glides (blocks above measured) can leave the scroll target
    behind the view; the next page goes a page on from what is shown, not from there."""
    async with long_history(tmp_path, 300) as (app, pilot):
        transcript = app.chat.query_one(Transcript)
        transcript.scroll_to(y=100, animate=False, immediate=True)
        await pilot.pause()
        page = transcript.scrollable_content_region.height
        transcript.set_reactive(Transcript.scroll_target_y, 70.5)
        await pilot.press("pagedown")
        assert transcript.scroll_target_y == 100 + page
        shown = transcript.scroll_y
        transcript.set_reactive(Transcript.scroll_target_y, shown + 30.5)
        await pilot.press("pageup")
        assert transcript.scroll_target_y == shown - page


async def test_pages_only_scroll_between_batches_and_a_held_key_pages_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with long_history(tmp_path, 2_000) as (app, pilot):
        transcript = app.chat.query_one(Transcript)
        transcript.scroll_home(animate=False, immediate=True)
        await wait_until(pilot, lambda: on_screen(app, timeline(app)[0]))
        mounts: list[tuple[int, int]] = []
        mount = transcript._mount

        def counted(start: int, end: int) -> None:
            mounts.append((start, end))
            mount(start, end)

        monkeypatch.setattr(transcript, "_mount", counted)
        page = transcript.scrollable_content_region.height
        for _ in range(30):
            before = transcript.scroll_y
            await pilot.press("pagedown")
            await pilot.pause()
            # (A page, give or take a block above measured taller or shorter than guessed:
            # the view then moves with what it shows.)
            assert transcript.scroll_y > before + page / 2
        # Blocks come in batches of a few screens: most pages mount nothing (and lay nothing
        # out), yet every page showed blocks all the way down (`scroll_y` above).
        assert 5 <= len(mounts) <= 20  # (one a page, before batches: 80)
        assert len(transcript.blocks) < WINDOW
        # The spacers stand for thousands of lines and keep nothing per line (Textual's
        # dirty-line set held an int for each: 200,000 of them for 20,000 items).
        assert transcript._above.cells > 500
        assert not transcript._above._styles_cache._dirty_lines
        assert not transcript._below._styles_cache._dirty_lines

        # Blocks shown again for other items show those items: a card its own terminal.
        def its_own(block: Block) -> bool:
            if isinstance(block.item, Message):
                return block.text() == block.item.text
            if isinstance(block, ToolCallCard):
                shown = {view.terminal_id for view in block.query(TerminalView)}
                return block.text().startswith(block.item.title) and shown == block.terminal_ids
            return True

        await wait_until(pilot, lambda: all(its_own(block) for block in transcript.blocks))
        # Keys that come faster than frames each move a page: the next page starts from where
        # the last one is heading, not from where the view was last drawn.
        before = transcript.scroll_target_y
        for _ in range(3):
            app.chat.action_scroll_transcript(1)
        assert transcript.scroll_target_y == round(before + 3 * page)
        await wait_until(pilot, lambda: transcript.scroll_y > before + 2 * page)
