"""The transcript: the session's whole timeline as a virtual list.

The session state keeps the whole history; the transcript mounts only the blocks near the view
(the *window*), between two spacers that stand for everything above and below it. Every item
has a height: measured while its block is mounted, guessed from its text before
(`heights.estimate`). So the scrollbar spans the whole history, scrolling mounts blocks ahead of
the view and releases those far behind it, and a jump anywhere (search, Home, the scrollbar)
mounts the neighbourhood of where it lands. The user's folds are kept by item, so a block
mounted again looks as it was left. When a block above the view turns out taller or shorter
than guessed, the view is moved by as much in the same layout pass: what the user reads stays
put. Following is Textual's anchor: it stops when the user scrolls up and resumes at the
bottom (or with End).

The window's books (which blocks are mounted, every item's height, the spacers) are kept by
`transcript_window.TranscriptWindow`, mixed in here.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from acp_tui.session.change import Change
from acp_tui.session.state import (
    Message,
    Notice,
    PlanState,
    SessionState,
    TerminalState,
    TimelineItem,
    ToolCallState,
)
from acp_tui.ui.widgets.block import Block
from acp_tui.ui.widgets.heights import estimate
from acp_tui.ui.widgets.message import AgentMessage
from acp_tui.ui.widgets.quiet_size import quiet_virtual_size
from acp_tui.ui.widgets.thought import Thought
from acp_tui.ui.widgets.tool_call import ToolCallCard
from acp_tui.ui.widgets.transcript_window import AHEAD, Spacer, TranscriptWindow


class Transcript(TranscriptWindow, VerticalScroll, can_focus=False):
    """Every message, tool call, plan and notice of the session, in order."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("end", "follow", "Follow", show=False),
        Binding("up,k", "focus_block(-1)", "Previous", show=False),
        Binding("down,j", "focus_block(1)", "Next", show=False),
        Binding("home", "first_block", "First", show=False),
    ]

    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        scrollbar-gutter: stable;
        scrollbar-size-vertical: 1;
        padding: 0 0 1 0;
    }
    Transcript > .transcript--welcome {
        margin: 1 2 0 2;
        padding: 1 2;
        border: round $foreground 15%;
        color: $text-muted;
    }
    """

    virtual_size = quiet_virtual_size()

    following: reactive[bool] = reactive(True)
    """Whether the view sticks to the end of the stream."""

    class FollowChanged(TextualMessage):
        def __init__(self, following: bool) -> None:
            super().__init__()
            self.following = following

    class FocusReleased(TextualMessage):
        """The focused block scrolled far away and was released: the focus needs a home."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state: SessionState | None = None
        self.root: Path | None = None
        self._above = Spacer()
        self._below = Spacer()
        self._window: list[Block] = []
        """The mounted blocks, in timeline order: the items from `_first` on."""
        self._first = 0
        self._blocks: dict[int, Block] = {}
        """The mounted blocks by `id()` of their item (items compare by identity)."""
        self._heights: list[int] = []
        """Each timeline item's height in lines, its gap above included: measured, or
        guessed at `_width`."""
        self._offsets: list[int] | None = None
        """Where each item starts (sums of `_heights`), until a height changes."""
        self._width = 0
        self._changed: dict[int, TimelineItem] = {}
        """Items outside the window that changed since their height was last guessed."""
        self._folds: dict[int, bool] = {}
        """The user's choice to open or close a block (by item), kept while it is released."""
        self._open_thoughts: list[Thought] = []
        self._spare: dict[Hashable, list[Block]] = {}
        """Released blocks by `_reuse_key`, hidden, to show other items of their kind."""
        self._update_scheduled = False
        self._arranged: DockArrangeResult | None = None
        self._placed: dict[Widget, int] = {}
        """Where each child was at the last layout (lines from the top of the content)."""
        self._follow_when_long = False
        """The view follows the stream, but waits for it to overflow before anchoring."""

    def compose(self) -> Any:
        yield self._above
        yield self._below

    def on_mount(self) -> None:
        self.anchor()

    def watch_virtual_size(self, size: Size) -> None:
        self._anchor_if_long(size)

    def _anchor_if_long(self, size: Size) -> None:
        # Textual 8 scrolls an anchored container to `content - viewport`, which is negative
        # while the content is shorter than the view (it then sits at the bottom, under a
        # blank screen). So the anchor is only held while there is something to scroll: the
        # content grew past the view, or the view shrank under it (a dialog opened below).
        fits = size.height <= self.scrollable_content_region.height
        if fits and self.is_anchored:
            self.anchor(False)
            self._follow_when_long = True
            if self.scroll_y != 0:
                self.set_reactive(Transcript.scroll_y, 0.0)
                self.set_reactive(Transcript.scroll_target_y, 0.0)
                self.refresh()
        elif not fits and self._follow_when_long and not self.is_anchored:
            self._follow_when_long = False
            self.anchor()
        self._update_following()

    def attach(self, state: SessionState, root: Path | None) -> None:
        """Show `state` (whatever it already holds, then its changes), instead of what is
        shown: only its last screens are mounted."""
        others = [child for child in self.children if child not in (self._above, self._below)]
        if others:
            self.remove_children(others)
        self._window, self._blocks, self._first = [], {}, 0
        self._heights, self._offsets, self._width = [], None, 0
        self._changed.clear()
        self._folds.clear()
        self._open_thoughts.clear()
        self._spare.clear()
        self._placed = {}
        self.state = state
        self.root = root
        self._sync_heights()
        count = len(state.timeline)
        if count:
            offsets = self._item_offsets()
            view = self._view_height()
            self._show_range(self._index_at(offsets[-1] - view * (1 + AHEAD)), count)
        else:
            self._set_spacers()

    def welcome(self, agent: str) -> None:
        """A word on how to start, above an empty session (it scrolls away with the rest)."""
        text = Content.assemble(
            ("Connected to ", ""),
            (agent, "bold $text-accent"),
            (".  Write below and press Enter.\n\n", ""),
            ("/", "bold $text-accent"),
            (" the agent's commands    ", ""),
            ("@", "bold $text-accent"),
            (" mention a file    ", ""),
            ("F2", "bold $text-accent"),
            (" mode and model    ", ""),
            ("F1", "bold $text-accent"),
            (" every key", ""),
        )
        self.mount(Static(text, classes="transcript--welcome"), before=0)

    # -- changes ------------------------------------------------------------------------------

    def show(self, change: Change) -> None:
        """Apply one session change to the blocks it concerns (or to the heights of those
        not mounted)."""
        item = change.item
        if change.kind == "plan_removed":
            self._plan_removed(item)
            return
        if change.kind == "terminal" and isinstance(item, TerminalState):
            for block in self._window:
                if isinstance(block, ToolCallCard) and item.id in block.terminal_ids:
                    block.terminal_changed(item.id)
            return
        if not isinstance(item, Message | ToolCallState | PlanState | Notice):
            return
        block = self._blocks.get(id(item))
        if block is not None:
            block.sync(change.delta)
            return
        state = self.state
        if state is None or not state.timeline:
            return
        timeline = state.timeline
        if timeline[-1] is item and len(self._heights) < len(timeline):
            self._settle_thoughts()  # something new came after them
            if self._first + len(self._window) == len(timeline) - 1 == len(self._heights):
                self._mount_last(item)
                return
        self._changed[id(item)] = item
        self._schedule_update()

    def _mount_last(self, item: TimelineItem) -> None:
        """A new item, and the window reaches the end: its block streams in at once."""
        block = self._block_for(item)
        self._heights.append(estimate(item, self._width))
        self._offsets = None
        self._window.append(block)
        self._blocks[id(item)] = block
        self._place(block, before=self._below)
        if isinstance(block, Thought):
            self._open_thoughts.append(block)
        self._schedule_update()  # blocks far above can go

    def _plan_removed(self, item: Any) -> None:
        block = self._blocks.pop(id(item), None)
        if block is not None:
            self._window.remove(block)
            block.remove()
        if self.state is not None and self._window:
            self._first = self.state.timeline.index(self._window[0].item)
        self._width = 0  # an item left the middle: every height is guessed again
        self._schedule_update()

    def turn_ended(self) -> None:
        self._settle_thoughts()
        for block in self._window:
            if isinstance(block, AgentMessage):
                block.flush()

    def _settle_thoughts(self) -> None:
        for thought in self._open_thoughts:
            thought.settle()
        self._open_thoughts.clear()

    # -- heights ------------------------------------------------------------------------------

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Textual's arrangement, from which the mounted blocks' heights are measured and the
        view kept on what the user reads, before anything is drawn."""
        result = super().arrange(size, optimal)
        if optimal or result is self._arranged:
            return result
        self._arranged = result
        placed = {placement.widget: placement.region.y for placement in result.placements}
        self._keep_place(placed)
        for block in self._window:  # the top block's were taken; the others' moved it, or not
            block.take_moved(-1)
        self._measure(placed)
        self._placed = placed
        return result

    def _keep_place(self, placed: dict[Widget, int]) -> None:
        """If the block at the top of the view moved (blocks above it mounted, measured or
        released), or lines were added above the view inside it (a long answer's blocks
        measured), scroll by as much: the same arrangement pass then draws it in place."""
        if not self._placed or (self.is_anchored and not self._anchor_released):
            return
        top = self.scroll_y
        anchor, was = None, 0
        for block in self._window:
            before = self._placed.get(block)
            if before is None:
                continue
            if before > top:
                break
            anchor, was = block, before
        now = placed.get(anchor) if anchor is not None else None
        if now is None or anchor is None:
            return
        moved = anchor.take_moved(int(top) - was)
        if now == was and not moved:
            return
        scroll = max(0.0, self.scroll_y + now - was + moved)
        self.set_reactive(Transcript.scroll_y, scroll)
        self.set_reactive(Transcript.scroll_target_y, scroll)
        self.vertical_scrollbar._reactive_position = scroll
        self.vertical_scrollbar.refresh()

    def _measure(self, placed: dict[Widget, int]) -> None:
        window, heights, first = self._window, self._heights, self._first
        for index, block in enumerate(window):
            top = placed.get(block)
            below = window[index + 1] if index + 1 < len(window) else self._below
            bottom = placed.get(below)
            if top is None or bottom is None or first + index >= len(heights):
                continue
            if heights[first + index] != bottom - top:
                heights[first + index] = bottom - top
                self._offsets = None

    # -- the window ---------------------------------------------------------------------------

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._update_following()
        self._schedule_update()

    def on_resize(self) -> None:
        self._anchor_if_long(self.virtual_size)
        # Textual moves an anchored view's thumb (`_reactive_position`) without redrawing it.
        self.vertical_scrollbar.refresh()
        self._schedule_update()

    def _update_following(self) -> None:
        # Textual releases the anchor when the user scrolls, and restores it at the bottom.
        anchored = self.is_anchored and not self._anchor_released
        following = anchored or self._follow_when_long
        if following != self.following:
            self.following = following
            self.post_message(self.FollowChanged(following))

    def reveal(self, item: Any) -> Block | None:
        """Mount `item`'s block (and its neighbours) if it is not, scroll to it, focus it."""
        state = self.state
        if state is None:
            return None
        block = self._blocks.get(id(item))
        if block is None:
            try:
                index = state.timeline.index(item)
            except ValueError:
                return None
            self._jump_to(index)
            block = self._blocks.get(id(item))
        if block is not None:
            self.call_after_refresh(self._focus_block, block)
        return block

    def _jump_to(self, index: int) -> None:
        self._sync_heights()
        offsets = self._item_offsets()
        view = self._view_height()
        start = self._index_at(offsets[index] - view * AHEAD)
        end = self._index_at(offsets[index] + view * (1 + AHEAD)) + 1
        self._show_range(start, max(end, index + 1))
        self._placed = {}  # nothing shown before is where it was: no place to keep
        self.scroll_to(
            y=self._above.virtual_region.y + offsets[index], animate=False, immediate=True
        )

    def scroll_pages(self, pages: int) -> None:
        """Scroll by whole screens from where the last scroll is heading, so that a held
        key pages on before the page before is drawn (Textual's `scroll_page_down` starts
        from where the view is, and only after the next refresh). Never from behind the
        view: a place kept (`_keep_place`) while a page glides there leaves the target
        behind it, and a page from there moved a few lines (9 of 32, on a busy machine)."""
        height = self.scrollable_content_region.height
        target, shown = self.scroll_target_y, self.scroll_y
        start = max(target, shown) if pages > 0 else min(target, shown)
        self.scroll_to(y=start + pages * height, immediate=True)

    def _focus_block(self, block: Widget) -> None:
        if block.is_attached:
            block.focus(scroll_visible=False)
            self.scroll_to_widget(
                block, animate=False, top=block.outer_size.height > self.size.height
            )

    # -- actions ------------------------------------------------------------------------------

    def action_follow(self) -> None:
        if self.virtual_size.height <= self.scrollable_content_region.height:
            self._follow_when_long = True
        else:
            self.anchor()
            self.scroll_end(animate=False, immediate=True)
        self._update_following()
        self._schedule_update()

    def action_focus_block(self, step: int) -> None:
        state, window = self.state, self._window
        if state is None or not window:
            return
        focused = self.screen.focused
        if isinstance(focused, Block) and focused in window:
            index = self._first + window.index(focused) + step
        else:
            index = self._first + (len(window) - 1 if step < 0 else 0)
        if 0 <= index < len(state.timeline):
            self.reveal(state.timeline[index])

    def action_first_block(self) -> None:
        if self.state is not None and self.state.timeline:
            self.reveal(self.state.timeline[0])

    def focus_last(self) -> None:
        """Browse the blocks from the last one (mounted again if the view is far above)."""
        if self.state is not None and self.state.timeline:
            self.reveal(self.state.timeline[-1])
